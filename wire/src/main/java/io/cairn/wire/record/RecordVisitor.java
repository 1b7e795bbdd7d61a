package io.cairn.wire.record;

/**
 * Receives the fields of each record of a batch as {@link RecordBatch#scanRecords} reads them, without the record's
 * key, value or headers being copied (what Kafka's {@code skipKeyValueIterator} gives its validator). Implementations
 * are called on the scanning thread only.
 */
@FunctionalInterface
public interface RecordVisitor {

    /**
     * One record.
     *
     * @param index       its position in the batch, from 0
     * @param offsetDelta its offset relative to the batch's base offset, as stored
     * @param timestamp   its absolute timestamp (base timestamp + delta; for LOG_APPEND_TIME batches, maxTimestamp)
     * @param keySize     the key length, -1 for a null key
     * @param valueSize   the value length, -1 for a null value
     */
    void record(int index, int offsetDelta, long timestamp, int keySize, int valueSize);
}
