package io.cairn.isr;

import java.util.OptionalLong;

/**
 * What a leader knows of one follower's position (Kafka's {@code ReplicaState}), as its fetches reported it.
 * Immutable; {@link Partition} replaces it atomically on every follower fetch and leadership change.
 *
 * @param logStartOffset              the follower's log start offset, -1 when unknown
 * @param logEndOffset                the follower's log end offset (its last fetch offset), -1 when unknown
 * @param lastFetchLeaderLogEndOffset the leader's log end offset when the follower's last fetch arrived
 * @param lastFetchTimeMs             when the follower's last fetch arrived
 * @param lastCaughtUpTimeMs          the latest time at which the follower had everything the leader had: the
 *                                    largest t such that the follower's fetch offset reached the leader's log end
 *                                    offset of time t; what ISR shrinking compares with {@code replica.lag.time.max.ms}
 * @param brokerEpoch                 the broker epoch its last fetch carried (-1 when the fetch had none); empty
 *                                    before its first fetch to this leader (KIP-903: such a follower cannot join
 *                                    the ISR)
 */
public record ReplicaState(long logStartOffset, long logEndOffset, long lastFetchLeaderLogEndOffset,
                           long lastFetchTimeMs, long lastCaughtUpTimeMs, OptionalLong brokerEpoch) {

    /** A follower nothing is known of (Kafka's {@code ReplicaState.Empty}). */
    static final ReplicaState EMPTY = new ReplicaState(-1L, -1L, 0L, 0L, 0L, OptionalLong.empty());

    /**
     * The state after a fetch at {@code fetchOffset} that arrived at {@code fetchTimeMs} while the leader's log end
     * offset was {@code leaderEndOffset} (Kafka's {@code updateFetchStateOrThrow}): caught up now when the fetch
     * reached the leader's end; caught up at the previous fetch's time when it reached the leader's end of then (so
     * a follower behind a steady stream of small appends still counts as caught up).
     */
    ReplicaState afterFetch(long fetchOffset, long followerStartOffset, long fetchTimeMs, long leaderEndOffset,
                            long fetchBrokerEpoch) {
        long caughtUp;
        if (fetchOffset >= leaderEndOffset) {
            caughtUp = Math.max(lastCaughtUpTimeMs, fetchTimeMs);
        } else if (fetchOffset >= lastFetchLeaderLogEndOffset) {
            caughtUp = Math.max(lastCaughtUpTimeMs, lastFetchTimeMs);
        } else {
            caughtUp = lastCaughtUpTimeMs;
        }
        return new ReplicaState(followerStartOffset, fetchOffset, Math.max(leaderEndOffset,
            lastFetchLeaderLogEndOffset), fetchTimeMs, caughtUp, OptionalLong.of(fetchBrokerEpoch));
    }

    /**
     * The state when this broker becomes leader, or is re-elected in a new epoch (Kafka's {@code
     * resetReplicaState}): an in-sync follower counts as caught up now, any other as never, so that a follower
     * outside the ISR never holds the high watermark back; a new leader forgets the follower's position.
     */
    ReplicaState afterElection(long nowMs, long leaderEndOffset, boolean newLeader, boolean inSync) {
        long caughtUp = inSync ? nowMs : 0L;
        if (newLeader) {
            return new ReplicaState(-1L, -1L, -1L, 0L, caughtUp, OptionalLong.empty());
        }
        return new ReplicaState(logStartOffset, logEndOffset, leaderEndOffset, inSync ? nowMs : 0L, caughtUp,
            brokerEpoch);
    }

    /** Kafka's {@code isCaughtUp}: at the leader's end, or caught up within the last {@code maxLagMs}. */
    public boolean isCaughtUp(long leaderEndOffset, long nowMs, long maxLagMs) {
        return leaderEndOffset == logEndOffset || nowMs - lastCaughtUpTimeMs <= maxLagMs;
    }
}
