/**
 * The log's minimal view of Kafka record batches v2 stored on disk: header accessors over {@code ByteBuffer} and
 * record decoding (with decompression) where a storage rule needs records.
 */
package io.cairn.log.record;
