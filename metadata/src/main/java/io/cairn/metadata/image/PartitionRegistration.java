package io.cairn.metadata.image;

import java.util.List;

/**
 * The replication state of one partition. Immutable, thread-safe.
 *
 * @param replicas         the assigned replicas, preferred leader first; during a reassignment the target replicas
 *                         followed by the ones being removed (Kafka's layout)
 * @param isr              the in-sync replicas (the leader is always one of them when there is a leader)
 * @param leader           the leader's broker id, {@link #NO_LEADER} when none
 * @param leaderEpoch      grows each time the leader changes
 * @param partitionEpoch   grows on every change of this partition
 * @param removingReplicas the replicas an ongoing reassignment removes (empty when none)
 * @param addingReplicas   the replicas an ongoing reassignment adds (empty when none)
 * @param elr              the eligible leader replicas (KIP-966): replicas that left the ISR cleanly while it was
 *                         below {@code min.insync.replicas}; they may lead when the ISR is empty (empty when none)
 * @param lastKnownElr     the last leader when the ISR became empty, for balanced recovery (empty when none)
 */
public record PartitionRegistration(List<Integer> replicas, List<Integer> isr, int leader, int leaderEpoch,
                                    int partitionEpoch, List<Integer> removingReplicas,
                                    List<Integer> addingReplicas, List<Integer> elr, List<Integer> lastKnownElr) {

    /** The leader id of a partition without leader. */
    public static final int NO_LEADER = -1;

    public PartitionRegistration {
        replicas = List.copyOf(replicas);
        isr = List.copyOf(isr);
        removingReplicas = List.copyOf(removingReplicas);
        addingReplicas = List.copyOf(addingReplicas);
        elr = List.copyOf(elr);
        lastKnownElr = List.copyOf(lastKnownElr);
    }

    /** A partition without eligible leader replicas. */
    public PartitionRegistration(List<Integer> replicas, List<Integer> isr, int leader, int leaderEpoch,
                                 int partitionEpoch, List<Integer> removingReplicas, List<Integer> addingReplicas) {
        this(replicas, isr, leader, leaderEpoch, partitionEpoch, removingReplicas, addingReplicas, List.of(),
                List.of());
    }

    /** A partition without an ongoing reassignment. */
    public PartitionRegistration(List<Integer> replicas, List<Integer> isr, int leader, int leaderEpoch,
                                 int partitionEpoch) {
        this(replicas, isr, leader, leaderEpoch, partitionEpoch, List.of(), List.of());
    }

    public boolean hasLeader() {
        return leader != NO_LEADER;
    }

    /** The preferred (first) replica. */
    public int preferredLeader() {
        return replicas.isEmpty() ? NO_LEADER : replicas.get(0);
    }

    /** Whether a reassignment is under way (some replicas are being added or removed). */
    public boolean reassigning() {
        return !removingReplicas.isEmpty() || !addingReplicas.isEmpty();
    }
}
