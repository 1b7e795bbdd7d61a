package io.cairn.metadata.controller;

import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.record.PartitionChangeRecord;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.IntPredicate;

/**
 * Computes the change of one partition when brokers leave (fenced, shutting down, registered again) or come back,
 * as Kafka's {@code generateLeaderAndIsrUpdates}: the leaving broker leaves the ISR, and a leader is elected by
 * {@link PartitionChange}'s rules when the current one is gone — from the ISR in replica order, from the eligible
 * leader replicas when the ISR is empty, or, only with unclean election, from any usable replica, which becomes the
 * sole ISR member. Without eligible leader replicas the ISR is never emptied (the last member stays); with them it
 * may be, and the members that leave it while it is below {@code min.insync.replicas} join the ELR. Stateless,
 * thread-safe.
 */
public final class PartitionElection {

    private PartitionElection() {
    }

    /**
     * The record bringing the partition in line with broker availability, without eligible leader replicas, or
     * empty when nothing changes.
     *
     * @param topicId   the topic id
     * @param index     the partition index
     * @param current   the current registration
     * @param usable    whether a broker may lead (unfenced, not shutting down)
     * @param leaving   a broker to remove from the ISR, or -1
     * @param unclean   whether unclean leader election is enabled for the topic
     */
    public static Optional<PartitionChangeRecord> rebalance(Uuid topicId, int index, PartitionRegistration current,
                                                            IntPredicate usable, int leaving, boolean unclean) {
        return rebalance(topicId, index, current, usable, leaving, -1, unclean, false, 1);
    }

    /**
     * As {@link #rebalance(Uuid, int, PartitionRegistration, IntPredicate, int, boolean)}, with eligible leader
     * replicas when {@code elr} (KIP-966) and a broker that registered again after an unclean shutdown.
     *
     * @param uncleanShutdown a broker that shut down uncleanly: it leaves the ISR and the ELR; or -1
     * @param elr             whether eligible leader replicas are enabled
     * @param minIsr          the topic's effective min.insync.replicas
     */
    public static Optional<PartitionChangeRecord> rebalance(Uuid topicId, int index, PartitionRegistration current,
                                                            IntPredicate usable, int leaving, int uncleanShutdown,
                                                            boolean unclean, boolean elr, int minIsr) {
        List<Integer> isr = new ArrayList<>(current.isr());
        isr.remove(Integer.valueOf(leaving));
        isr.remove(Integer.valueOf(uncleanShutdown));
        PartitionChange change = new PartitionChange(topicId, index, current, id -> id != leaving && usable.test(id))
                .isr(isr)
                .election(unclean ? PartitionChange.Election.UNCLEAN : PartitionChange.Election.ONLINE)
                .eligibleLeaderReplicas(elr, minIsr);
        if (uncleanShutdown >= 0) {
            change.uncleanShutdown(uncleanShutdown);
        }
        return change.build();
    }
}
