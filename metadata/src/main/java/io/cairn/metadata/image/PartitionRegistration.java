package io.cairn.metadata.image;

import java.util.List;

/**
 * The replication state of one partition. Immutable, thread-safe.
 *
 * @param replicas       the assigned replicas, preferred leader first
 * @param isr            the in-sync replicas (the leader is always one of them when there is a leader)
 * @param leader         the leader's broker id, {@link #NO_LEADER} when none
 * @param leaderEpoch    grows each time the leader changes
 * @param partitionEpoch grows on every change of this partition
 */
public record PartitionRegistration(List<Integer> replicas, List<Integer> isr, int leader, int leaderEpoch,
                                    int partitionEpoch) {

    /** The leader id of a partition without leader. */
    public static final int NO_LEADER = -1;

    public PartitionRegistration {
        replicas = List.copyOf(replicas);
        isr = List.copyOf(isr);
    }

    public boolean hasLeader() {
        return leader != NO_LEADER;
    }

    /** The preferred (first) replica. */
    public int preferredLeader() {
        return replicas.isEmpty() ? NO_LEADER : replicas.get(0);
    }
}
