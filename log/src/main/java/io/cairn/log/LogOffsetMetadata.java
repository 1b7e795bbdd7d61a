package io.cairn.log;

/**
 * An offset with where it lives on disk, so the server can compare fetch positions and bound reads by byte
 * position without another index lookup (Kafka's {@code LogOffsetMetadata}). Immutable.
 *
 * @param messageOffset             the offset
 * @param segmentBaseOffset         base offset of the segment holding it, or -1 when unknown
 * @param relativePositionInSegment byte position of its batch in that segment, or -1 when unknown
 */
public record LogOffsetMetadata(long messageOffset, long segmentBaseOffset, int relativePositionInSegment) {

    public static LogOffsetMetadata offsetOnly(long offset) {
        return new LogOffsetMetadata(offset, -1L, -1);
    }
}
