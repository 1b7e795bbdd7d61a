package io.cairn.metadata.controller;

import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.record.PartitionChangeRecord;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.IntPredicate;

/**
 * Builds the one {@link PartitionChangeRecord} that moves a partition to a target ISR and assignment, following
 * Kafka's {@code PartitionChangeBuilder} without eligible leader replicas: first an ongoing reassignment is completed
 * when the target ISR holds every target replica (the removing replicas leave the replicas and the ISR), then a
 * leader is elected (see {@link Election}), a leader epoch is started when replicas are dropped, and the record
 * names only what changes. The ISR is never emptied. Not thread-safe: build one change per thread and discard it.
 */
final class PartitionChange {

    /** Kafka's election types. */
    enum Election {
        /** The preferred (first) replica when it is in the ISR and usable, else as {@link #ONLINE}. */
        PREFERRED,
        /** Keep a usable ISR leader, else the first usable ISR member in replica order. */
        ONLINE,
        /** As {@link #ONLINE}, else any usable replica, which becomes the sole ISR member. */
        UNCLEAN
    }

    private final Uuid topicId;
    private final int partitionId;
    private final PartitionRegistration current;
    private final IntPredicate usable;
    private Election election = Election.ONLINE;
    private List<Integer> targetIsr;
    private List<Integer> targetReplicas;
    private List<Integer> targetRemoving;
    private List<Integer> targetAdding;

    /**
     * @param usable whether a broker may lead (registered, unfenced, not in controlled shutdown)
     */
    PartitionChange(Uuid topicId, int partitionId, PartitionRegistration current, IntPredicate usable) {
        this.topicId = topicId;
        this.partitionId = partitionId;
        this.current = current;
        this.usable = usable;
        this.targetIsr = current.isr();
        this.targetReplicas = current.replicas();
        this.targetRemoving = current.removingReplicas();
        this.targetAdding = current.addingReplicas();
    }

    PartitionChange election(Election value) {
        this.election = value;
        return this;
    }

    PartitionChange isr(List<Integer> value) {
        this.targetIsr = List.copyOf(value);
        return this;
    }

    PartitionChange replicas(List<Integer> value) {
        this.targetReplicas = List.copyOf(value);
        return this;
    }

    PartitionChange removing(List<Integer> value) {
        this.targetRemoving = List.copyOf(value);
        return this;
    }

    PartitionChange adding(List<Integer> value) {
        this.targetAdding = List.copyOf(value);
        return this;
    }

    /** The record, or empty when nothing would change. */
    Optional<PartitionChangeRecord> build() {
        PartitionChangeRecord record = new PartitionChangeRecord().setTopicId(topicId).setPartitionId(partitionId);
        completeReassignmentIfPossible();
        elect(record);
        if (record.leader() == -2 && !targetReplicas.containsAll(current.replicas())) {
            // Replicas leave the assignment: a new leader epoch fences them.
            record.setLeader(current.leader());
        }
        if (record.isr() == null && !targetIsr.isEmpty() && !targetIsr.equals(current.isr())) {
            record.setIsr(targetIsr);
        }
        if (!targetReplicas.isEmpty() && !targetReplicas.equals(current.replicas())) {
            record.setReplicas(targetReplicas);
        }
        if (!targetRemoving.equals(current.removingReplicas())) {
            record.setRemovingReplicas(targetRemoving);
        }
        if (!targetAdding.equals(current.addingReplicas())) {
            record.setAddingReplicas(targetAdding);
        }
        boolean noOp = record.leader() == -2 && record.isr() == null && record.replicas() == null
                && record.removingReplicas() == null && record.addingReplicas() == null;
        return noOp ? Optional.empty() : Optional.of(record);
    }

    /** Kafka's {@code PartitionReassignmentReplicas.maybeCompleteReassignment}, applied to the targets. */
    private void completeReassignmentIfPossible() {
        if (targetRemoving.isEmpty() && targetAdding.isEmpty()) {
            return;
        }
        List<Integer> isr = new ArrayList<>(targetIsr);
        isr.removeAll(targetRemoving);
        List<Integer> replicas = new ArrayList<>(targetReplicas);
        replicas.removeAll(targetRemoving);
        if (isr.isEmpty() || replicas.isEmpty() || !isr.containsAll(replicas)) {
            return;
        }
        targetIsr = List.copyOf(isr);
        targetReplicas = List.copyOf(replicas);
        targetRemoving = List.of();
        targetAdding = List.of();
    }

    private void elect(PartitionChangeRecord record) {
        int leader = PartitionRegistration.NO_LEADER;
        boolean unclean = false;
        if (election == Election.PREFERRED && !targetReplicas.isEmpty() && valid(targetReplicas.get(0))) {
            leader = targetReplicas.get(0);
        } else if (valid(current.leader())) {
            leader = current.leader();
        } else {
            leader = targetReplicas.stream().filter(this::valid).findFirst().orElse(PartitionRegistration.NO_LEADER);
            if (leader == PartitionRegistration.NO_LEADER && election == Election.UNCLEAN) {
                leader = targetReplicas.stream().filter(usable::test).findFirst()
                        .orElse(PartitionRegistration.NO_LEADER);
                unclean = leader != PartitionRegistration.NO_LEADER;
            }
        }
        if (leader != current.leader()) {
            record.setLeader(leader);
            if (unclean) {
                record.setIsr(List.of(leader));
            }
        }
    }

    private boolean valid(int replica) {
        return replica != PartitionRegistration.NO_LEADER && targetIsr.contains(replica) && usable.test(replica);
    }
}
