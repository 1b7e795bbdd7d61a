package io.cairn.log.producer;

/**
 * Where one idempotent batch landed: its sequence range and offsets, kept to recognise a retried batch.
 * Immutable.
 *
 * @param firstSeq    first sequence number
 * @param lastSeq     last sequence number
 * @param lastOffset  offset of the last record
 * @param offsetDelta lastOffset - firstOffset
 * @param timestamp   the batch's max timestamp
 */
public record BatchMetadata(int firstSeq, int lastSeq, long lastOffset, int offsetDelta, long timestamp) {

    public long firstOffset() {
        return lastOffset - offsetDelta;
    }
}
