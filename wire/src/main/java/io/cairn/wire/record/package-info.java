/**
 * Kafka record batches of magic 2: {@link io.cairn.wire.record.RecordBatch} (a view over the 61-byte header with
 * CRC32C validation and the setters the broker needs), {@link io.cairn.wire.record.RecordBatches} (the batches in a
 * buffer), {@link io.cairn.wire.record.Record} values decoded from them, the codecs none/gzip/snappy/lz4/zstd in
 * Kafka's stream formats, and {@link io.cairn.wire.record.RecordBatchBuilder} for batches the broker writes.
 */
package io.cairn.wire.record;
