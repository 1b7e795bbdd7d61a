package io.cairn.log.index;

/**
 * A timestamp and an offset: a time-index entry, or the max timestamp of a segment with the offset of the batch
 * that carries it (Kafka's {@code TimestampOffset}). Immutable.
 *
 * @param timestamp milliseconds, or -1 when unknown
 * @param offset    absolute offset
 */
public record TimestampOffset(long timestamp, long offset) {
}
