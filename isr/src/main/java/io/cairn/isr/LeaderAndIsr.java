package io.cairn.isr;

import java.util.ArrayList;
import java.util.List;

/**
 * An ISR a leader proposes to the controller, or the state the controller answered with (Kafka's
 * {@code LeaderAndIsr}): leader, leader epoch, the ISR with each member's broker epoch (KIP-903; -1 skips the check,
 * and answers carry -1) and the partition epoch the change is based on (a proposal) or reached (an answer).
 * Immutable.
 *
 * @param leader         the leader's broker id
 * @param leaderEpoch    the leader epoch
 * @param isrWithEpochs  the in-sync replicas in order, each with its broker epoch
 * @param partitionEpoch the partition epoch
 */
public record LeaderAndIsr(int leader, int leaderEpoch, List<Member> isrWithEpochs, int partitionEpoch) {

    /** One ISR member and the broker epoch it is known by (-1 when unknown). */
    public record Member(int brokerId, long brokerEpoch) {
    }

    public LeaderAndIsr {
        isrWithEpochs = List.copyOf(isrWithEpochs);
    }

    /** An answer's state: members without broker epochs. */
    public static LeaderAndIsr of(int leader, int leaderEpoch, List<Integer> isr, int partitionEpoch) {
        List<Member> members = new ArrayList<>(isr.size());
        isr.forEach(id -> members.add(new Member(id, -1L)));
        return new LeaderAndIsr(leader, leaderEpoch, members, partitionEpoch);
    }

    /** The member ids in order. */
    public List<Integer> isr() {
        List<Integer> ids = new ArrayList<>(isrWithEpochs.size());
        isrWithEpochs.forEach(m -> ids.add(m.brokerId()));
        return ids;
    }
}
