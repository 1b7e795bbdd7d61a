package io.cairn.isr;

import io.cairn.log.FetchDataInfo;

/**
 * One partition's read with the offsets a Fetch response reports, all taken before the read so that the records
 * never lie beyond the reported high watermark (Kafka's {@code LogReadInfo}). The caller owns {@link #info} and
 * must close it. Immutable.
 *
 * @param info             the records read (possibly an empty slice)
 * @param highWatermark    the high watermark
 * @param lastStableOffset the last stable offset
 * @param logStartOffset   the log start offset
 * @param logEndOffset     the log end offset
 * @param divergingEpoch   for a follower whose log diverged from the leader's: the epoch and end offset it must
 *                         truncate to (no records then); null otherwise
 */
public record LogReadResult(FetchDataInfo info, long highWatermark, long lastStableOffset, long logStartOffset,
                            long logEndOffset, EpochEndOffset divergingEpoch) implements AutoCloseable {

    @Override
    public void close() {
        info.close();
    }
}
