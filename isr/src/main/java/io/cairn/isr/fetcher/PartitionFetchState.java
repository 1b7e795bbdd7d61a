package io.cairn.isr.fetcher;

import io.cairn.wire.protocol.Uuid;

/**
 * One partition's state in a fetcher thread (Kafka's {@code PartitionFetchState}): the next offset to fetch, the lag
 * behind the leader's high watermark, the leader epoch fetched in, whether the log must first be truncated by leader
 * epoch ({@link Phase#TRUNCATING}) or is being fetched ({@link Phase#FETCHING}), a back-off after an error, and the
 * epoch of the last batch fetched (sent as {@code last_fetched_epoch} so the leader can report a divergence).
 * Immutable; the thread replaces it.
 *
 * @param topicId            the topic id
 * @param fetchOffset        the next offset to fetch
 * @param lag                the leader's high watermark minus the fetch offset, or -1 while unknown
 * @param currentLeaderEpoch the leader epoch of the fetches
 * @param delayedUntilMs     no truncation or fetch before this time (after an error), 0 for none
 * @param state              truncating or fetching
 * @param lastFetchedEpoch   the epoch of the last batch in the log, or -1 for none
 */
public record PartitionFetchState(Uuid topicId, long fetchOffset, long lag, int currentLeaderEpoch,
                                  long delayedUntilMs, Phase state, int lastFetchedEpoch) {

    /** No lag known yet. */
    public static final long UNKNOWN_LAG = -1L;
    /** No last fetched epoch (the log has no epoch history). */
    public static final int NO_EPOCH = -1;

    /** Kafka's {@code ReplicaState}: truncating by leader epoch first, or fetching. */
    public enum Phase {
        TRUNCATING,
        FETCHING
    }

    /** A new state without a delay. */
    static PartitionFetchState of(Uuid topicId, long fetchOffset, long lag, int currentLeaderEpoch, Phase state,
                                  int lastFetchedEpoch) {
        return new PartitionFetchState(topicId, fetchOffset, lag, currentLeaderEpoch, 0L, state, lastFetchedEpoch);
    }

    public boolean isDelayed(long nowMs) {
        return delayedUntilMs > nowMs;
    }

    /** Fetching and not backing off. */
    public boolean isReadyForFetch(long nowMs) {
        return state == Phase.FETCHING && !isDelayed(nowMs);
    }

    /** Truncating and not backing off. */
    public boolean isTruncating(long nowMs) {
        return state == Phase.TRUNCATING && !isDelayed(nowMs);
    }

    /** Caught up with the leader's high watermark at the last fetch. */
    public boolean isReplicaInSync() {
        return lag != UNKNOWN_LAG && lag <= 0;
    }

    PartitionFetchState delayedUntil(long untilMs) {
        return new PartitionFetchState(topicId, fetchOffset, lag, currentLeaderEpoch, untilMs, state,
            lastFetchedEpoch);
    }
}
