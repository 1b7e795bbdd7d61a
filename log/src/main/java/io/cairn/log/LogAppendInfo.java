package io.cairn.log;

/**
 * What an append did (Kafka's {@code LogAppendInfo}). Immutable.
 *
 * @param firstOffset          offset of the first record appended (or of the duplicated batch)
 * @param lastOffset           offset of the last record appended
 * @param maxTimestamp         largest batch max timestamp
 * @param offsetOfMaxTimestamp last offset of the batch carrying it
 * @param logAppendTime        the broker time stamped on the batches, or -1 for CreateTime
 * @param logStartOffset       the log start offset after the append
 * @param recordCount          records appended
 * @param validBytes           bytes appended
 * @param duplicate            true when the batch was a retry of an already written one and nothing was appended
 * @param lastLeaderEpoch      partition leader epoch of the last batch appended (a follower's fetcher takes it as
 *                             its last fetched epoch), -1 when nothing was appended
 */
public record LogAppendInfo(long firstOffset, long lastOffset, long maxTimestamp, long offsetOfMaxTimestamp,
                            long logAppendTime, long logStartOffset, int recordCount, int validBytes,
                            boolean duplicate, int lastLeaderEpoch) {
}
