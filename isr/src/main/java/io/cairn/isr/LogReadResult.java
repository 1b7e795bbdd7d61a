package io.cairn.isr;

import io.cairn.log.FetchDataInfo;

/**
 * One partition's read with the offsets a Fetch response reports, all taken before the read so that the records
 * never lie beyond the reported high watermark. The caller owns {@link #info} and must close it. Immutable.
 *
 * @param info             the records read (possibly an empty slice)
 * @param highWatermark    the high watermark
 * @param lastStableOffset the last stable offset
 * @param logStartOffset   the log start offset
 * @param logEndOffset     the log end offset
 */
public record LogReadResult(FetchDataInfo info, long highWatermark, long lastStableOffset, long logStartOffset,
                            long logEndOffset) implements AutoCloseable {

    @Override
    public void close() {
        info.close();
    }
}
