package io.cairn.isr.fetcher;

import io.cairn.isr.EpochEndOffset;
import io.cairn.log.epoch.EpochEntry;
import io.cairn.log.epoch.LeaderEpochCache;
import java.util.List;

/**
 * Where a follower truncates to, given its leader's answer for an epoch (an OffsetForLeaderEpoch result or the
 * diverging epoch of a fetch response): Kafka's {@code AbstractFetcherThread.getOffsetTruncationState} over the
 * follower's epoch history, kept to its offset (with truncation on fetch the next fetch's diverging epoch finishes
 * what one answer leaves); the future-log copy of a replica move uses the same rule against the current log.
 * Stateless.
 */
public final class TruncationPoint {

    private TruncationPoint() {
    }

    /**
     * The offset to truncate to, never beyond the follower's log end: no end offset from the leader keeps the fetch
     * offset; an end offset without epoch is taken as it is; an epoch the follower also has ends at the smaller of
     * both ends; an epoch the follower does not have ends where the follower's largest smaller epoch ends; an epoch
     * older than the follower's whole history at the leader's end offset.
     *
     * @param fetchOffset     the partition's fetch offset (its high watermark when it started without epochs)
     * @param logEndOffset    the follower's log end offset
     * @param history         the follower's epoch history
     * @param leaderEpoch     the leader's epoch, or {@link EpochEndOffset#UNDEFINED_EPOCH}
     * @param leaderEndOffset the leader's end offset of that epoch, or {@link EpochEndOffset#UNDEFINED_EPOCH_OFFSET}
     */
    public static long offset(long fetchOffset, long logEndOffset, List<EpochEntry> history, int leaderEpoch,
                       long leaderEndOffset) {
        if (leaderEndOffset == EpochEndOffset.UNDEFINED_EPOCH_OFFSET) {
            return fetchOffset;
        }
        if (leaderEpoch == EpochEndOffset.UNDEFINED_EPOCH) {
            return Math.min(leaderEndOffset, logEndOffset);
        }
        EpochEntry local = LeaderEpochCache.endOffsetFor(history, leaderEpoch, logEndOffset);
        if (local.equals(LeaderEpochCache.UNDEFINED)) {
            return Math.min(leaderEndOffset, logEndOffset);
        }
        if (local.epoch() != leaderEpoch) {
            return Math.min(local.startOffset(), logEndOffset);
        }
        return Math.min(Math.min(local.startOffset(), leaderEndOffset), logEndOffset);
    }
}
