package io.cairn.log.index;

/**
 * An offset and the byte position in the segment's {@code .log} of the batch that holds it (Kafka's
 * {@code OffsetPosition}). Immutable.
 *
 * @param offset   absolute offset
 * @param position byte position in the segment file
 */
public record OffsetPosition(long offset, int position) {
}
