package io.cairn.log;

/**
 * A ListOffsets answer: the timestamp found (-1 for earliest/latest), the offset and the leader epoch of the
 * batch at that offset (-1 when unknown). Immutable.
 *
 * @param timestamp   record timestamp, or -1
 * @param offset      offset
 * @param leaderEpoch leader epoch of the offset, or -1
 */
public record TimestampAndOffset(long timestamp, long offset, int leaderEpoch) {

    /** ListOffsets timestamp: the log start offset. */
    public static final long EARLIEST_TIMESTAMP = -2L;
    /** ListOffsets timestamp: the log end offset. */
    public static final long LATEST_TIMESTAMP = -1L;
    /** ListOffsets timestamp: the record with the largest timestamp. */
    public static final long MAX_TIMESTAMP = -3L;
    /** ListOffsets timestamp: the first offset on local disk (equal to the log start offset without tiering). */
    public static final long EARLIEST_LOCAL_TIMESTAMP = -4L;
}
