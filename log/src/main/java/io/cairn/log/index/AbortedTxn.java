package io.cairn.log.index;

/**
 * One aborted transaction in a {@code .txnindex}: the producer, the offsets of its first data record and of its
 * abort marker, and the last stable offset when the marker was written. Immutable.
 *
 * @param producerId       producer id
 * @param firstOffset      offset of the first record of the transaction
 * @param lastOffset       offset of the ABORT marker
 * @param lastStableOffset last stable offset of the partition after the abort
 */
public record AbortedTxn(long producerId, long firstOffset, long lastOffset, long lastStableOffset) {
}
