package io.cairn.isr;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A leader's ISR state (Kafka's {@code PartitionState}, KIP-497): the ISR last committed, or a change proposed to
 * the controller and not yet answered. At most one change is in flight per partition. The <em>maximal</em> ISR is the
 * one the high watermark and acks=all wait for: while an expansion is in flight it already counts the joining
 * replica (waiting for more replicas is always safe), while a shrink is in flight it still counts the leaving ones
 * (the shrink may fail). Immutable; {@link PartitionIsr} replaces it under the partition's write lock.
 */
sealed interface PartitionState permits PartitionState.Committed, PartitionState.Pending {

    /** The committed ISR. */
    List<Integer> isr();

    /** The ISR the high watermark and acks=all wait for. */
    List<Integer> maximalIsr();

    /** True while an AlterPartition for this partition is in flight. */
    boolean isInflight();

    /** The ISR as the metadata quorum committed it. */
    record Committed(List<Integer> isr) implements PartitionState {

        public Committed {
            isr = List.copyOf(isr);
        }

        @Override
        public List<Integer> maximalIsr() {
            return isr;
        }

        @Override
        public boolean isInflight() {
            return false;
        }
    }

    /** A change sent to the controller; {@code lastCommitted} is what it is based on. */
    sealed interface Pending extends PartitionState permits PendingExpandIsr, PendingShrinkIsr {

        /** The proposal sent. */
        LeaderAndIsr sent();

        Committed lastCommitted();

        @Override
        default List<Integer> isr() {
            return lastCommitted().isr();
        }

        @Override
        default boolean isInflight() {
            return true;
        }
    }

    /** Adding {@code newInSyncReplicaId}: the maximal ISR already counts it. */
    record PendingExpandIsr(int newInSyncReplicaId, LeaderAndIsr sent, Committed lastCommitted) implements Pending {

        @Override
        public List<Integer> maximalIsr() {
            List<Integer> maximal = new ArrayList<>(lastCommitted.isr());
            maximal.add(newInSyncReplicaId);
            return maximal;
        }
    }

    /** Removing {@code outOfSyncReplicaIds}: the maximal ISR still counts them. */
    record PendingShrinkIsr(Set<Integer> outOfSyncReplicaIds, LeaderAndIsr sent, Committed lastCommitted)
        implements Pending {

        public PendingShrinkIsr {
            outOfSyncReplicaIds = Set.copyOf(outOfSyncReplicaIds);
        }

        @Override
        public List<Integer> maximalIsr() {
            return lastCommitted.isr();
        }
    }
}
