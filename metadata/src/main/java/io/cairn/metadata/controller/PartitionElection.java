package io.cairn.metadata.controller;

import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.record.PartitionChangeRecord;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.IntPredicate;

/**
 * Computes the change of one partition when brokers leave (fenced, shutting down) or come back: removes a leaving
 * broker from the ISR (never emptying it, as Kafka without ELR keeps the last member), and elects a new leader
 * from the ISR in replica order when the current one is gone, or — only with unclean election — from any usable
 * replica, which becomes the sole ISR member. The leader is always an ISR member or {@code -1}. Stateless,
 * thread-safe.
 */
public final class PartitionElection {

    private PartitionElection() {
    }

    /**
     * The record bringing the partition in line with broker availability, or empty when nothing changes.
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
        List<Integer> isr = new ArrayList<>(current.isr());
        if (leaving >= 0 && isr.contains(leaving) && isr.size() > 1) {
            isr.remove(Integer.valueOf(leaving));
        }
        int leader = current.leader();
        boolean leaderOk = leader != PartitionRegistration.NO_LEADER && leader != leaving && usable.test(leader)
                && isr.contains(leader);
        if (!leaderOk) {
            leader = PartitionRegistration.NO_LEADER;
            for (int replica : current.replicas()) {
                if (replica != leaving && isr.contains(replica) && usable.test(replica)) {
                    leader = replica;
                    break;
                }
            }
            if (leader == PartitionRegistration.NO_LEADER && unclean) {
                for (int replica : current.replicas()) {
                    if (replica != leaving && usable.test(replica)) {
                        leader = replica;
                        isr = new ArrayList<>(List.of(replica));
                        break;
                    }
                }
            }
        }
        boolean isrChanged = !isr.equals(current.isr());
        boolean leaderChanged = leader != current.leader();
        if (!isrChanged && !leaderChanged) {
            return Optional.empty();
        }
        PartitionChangeRecord record = new PartitionChangeRecord().setTopicId(topicId).setPartitionId(index);
        if (isrChanged) {
            record.setIsr(List.copyOf(isr));
        }
        if (leaderChanged) {
            record.setLeader(leader);
        }
        return Optional.of(record);
    }
}
