package io.cairn.log;

import io.cairn.log.RecordValidationException.RecordError;
import io.cairn.wire.error.InvalidRecordException;
import io.cairn.wire.error.InvalidTimestampException;
import io.cairn.wire.error.RecordTooLargeException;
import io.cairn.wire.record.CompressionType;
import io.cairn.wire.record.Record;
import io.cairn.wire.record.RecordBatch;
import io.cairn.wire.record.RecordBatchBuilder;
import io.cairn.wire.record.RecordVisitor;
import io.cairn.wire.record.TimestampType;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The append rules of a leader for one v2 batch whose header, size and CRC are already checked (Kafka's
 * {@code LogValidator}): the batch-level rules for clients, then every record read without copying its key or value
 * (inner offsets, keys on compacted topics, timestamps against {@code message.timestamp.*}), the batch's max
 * timestamp recomputed from its records, and the topic's {@code compression.type} applied.
 *
 * <p>A batch is kept as the producer sent it (only its max timestamp, timestamp type and CRC may be rewritten in
 * place) unless the target codec differs from the producer's (or a coordinator's compressed batch has inner offsets
 * other than 0..n-1); then it is rebuilt with the target codec and consecutive offsets. A client's batch whose
 * inner offsets are not 0..n-1 is INVALID_RECORD. Every decompression is bounded by
 * {@link #MAX_UNCOMPRESSED_BYTES}. Stateless and thread-safe; runs on the appending thread, outside the log's lock.
 */
final class LogValidator {

    /** The most bytes the records of one batch may decompress to; beyond it the batch is CORRUPT_MESSAGE. */
    static final int MAX_UNCOMPRESSED_BYTES = RecordBatch.DEFAULT_MAX_UNCOMPRESSED_BYTES;

    /** Where rebuilt batches go: unpooled heap, since the log keeps them as {@code ByteBuffer}s over the array. */
    private static final ByteBufAllocator HEAP = new UnpooledByteBufAllocator(false);
    /** Scratch space for decompressed records, released before validation returns. */
    private static final ByteBufAllocator SCRATCH = PooledByteBufAllocator.DEFAULT;
    private static final int MAX_REPORTED_ERRORS = 3;

    private LogValidator() {
    }

    /**
     * The batch to store and what the log needs of it.
     *
     * @param batch        the bytes to append: the producer's batch (possibly with a rewritten header) or a rebuilt one
     * @param view         a view over {@code batch}'s memory (the caller's own view when the batch is kept)
     * @param recordCount  the number of records
     * @param maxTimestamp the largest record timestamp, or the append time for LogAppendTime topics
     */
    record Validated(ByteBuffer batch, RecordBatch view, int recordCount, long maxTimestamp) {
    }

    /**
     * Validates {@code batch}, the view of the batch at {@code at} of {@code records} (from {@code at} to its end),
     * and returns what to store.
     *
     * @throws InvalidRecordException     for a batch-level violation or malformed records
     * @throws RecordValidationException  when records break a record rule (with KIP-467 record errors)
     * @throws io.cairn.wire.error.CorruptRecordException for compressed data that does not decompress within bounds
     * @throws RecordTooLargeException    when a rebuilt batch exceeds {@code max.message.bytes}
     */
    static Validated validate(RecordBatch batch, ByteBuffer records, int at, LogConfig config, long now,
                              AppendOrigin origin, String partition) {
        if (origin == AppendOrigin.CLIENT) {
            validateClientBatch(batch, partition);
        }
        CompressionType source = batch.compressionType();
        CompressionType target = config.targetCompression(source);
        // Kafka does not compress control batches written uncompressed.
        if (source == CompressionType.NONE && batch.isControlBatch()) {
            target = CompressionType.NONE;
        }
        Scan scan = new Scan(config, now, partition, batch.timestampType());
        batch.scanRecords(SCRATCH, MAX_UNCOMPRESSED_BYTES, scan);
        scan.throwRecordErrors();
        if (!scan.consecutiveOffsets && origin == AppendOrigin.CLIENT) {
            // Kafka 4.1 stores an uncompressed batch with its broken offsets, and fails a compressed one with
            // UNKNOWN_SERVER_ERROR (it cannot rebuild from its key-skipping iterator); Cairn refuses both.
            throw new InvalidRecordException("Record " + scan.firstBadOffset + " of the batch has offset delta "
                + scan.firstBadDelta + " in topic partition " + partition);
        }
        boolean inPlace = source == target && (source == CompressionType.NONE || scan.consecutiveOffsets);
        if (inPlace) {
            long maxTimestamp = config.logAppendTime() ? now : scan.maxTimestamp;
            batch.setMaxTimestamp(config.logAppendTime() ? TimestampType.LOG_APPEND_TIME : TimestampType.CREATE_TIME,
                maxTimestamp);
            ByteBuffer bytes = records.duplicate();
            bytes.limit(at + batch.sizeInBytes()).position(at);
            return new Validated(bytes, batch, scan.count, maxTimestamp);
        }
        return rebuild(batch, target, config, now, partition);
    }

    /** Kafka's {@code validateBatch} rules for client batches of magic 2. */
    private static void validateClientBatch(RecordBatch batch, String partition) {
        long countFromOffsets = (long) batch.lastOffsetDelta() + 1;
        if (countFromOffsets <= 0) {
            throw new InvalidRecordException("Batch has an invalid offset range: [" + batch.baseOffset() + ", "
                + batch.lastOffset() + "] in topic partition " + partition);
        }
        int count = batch.recordCount();
        if (count <= 0) {
            throw new InvalidRecordException("Invalid reported count for record batch: " + count
                + " in topic partition " + partition);
        }
        if (countFromOffsets != count) {
            throw new InvalidRecordException("Inconsistent batch offset range [" + batch.baseOffset() + ", "
                + batch.lastOffset() + "] and count of records " + count + " in topic partition " + partition);
        }
        if (batch.isControlBatch()) {
            throw new InvalidRecordException("Clients are not allowed to write control records in topic partition "
                + partition);
        }
        if (batch.hasProducerId() && batch.baseSequence() < 0) {
            throw new InvalidRecordException("Invalid sequence number " + batch.baseSequence()
                + " in record batch with producerId " + batch.producerId() + " in topic partition " + partition);
        }
    }

    /** Rebuilds the batch with the target codec and offsets 0..n-1 (Kafka's {@code buildRecordsAndAssignOffsets}). */
    private static Validated rebuild(RecordBatch batch, CompressionType target, LogConfig config, long now,
                                     String partition) {
        List<Record> decoded = batch.records(SCRATCH, MAX_UNCOMPRESSED_BYTES);
        RecordBatchBuilder builder = new RecordBatchBuilder(HEAP, target)
            .compressionLevel(config.compressionLevel(target))
            .partitionLeaderEpoch(batch.partitionLeaderEpoch())
            .transactional(batch.isTransactional())
            .control(batch.isControlBatch());
        if (batch.hasProducerId()) {
            builder.producer(batch.producerId(), batch.producerEpoch(), batch.baseSequence());
        }
        if (config.logAppendTime()) {
            builder.logAppendTime(now);
        }
        for (int i = 0; i < decoded.size(); i++) {
            Record r = decoded.get(i);
            try {
                builder.appendWithOffset(i, r.timestamp(), r.key(), r.value(), r.headers());
            } catch (IllegalArgumentException e) {
                throw new InvalidTimestampException("Record " + i + " cannot be stored in topic partition "
                    + partition + ": " + e.getMessage());
            }
        }
        ByteBuf built = builder.build();
        int size = built.readableBytes();
        if (size > config.maxMessageBytes()) {
            throw new RecordTooLargeException("Message batch size is " + size + " bytes in append to partition "
                + partition + " which exceeds the maximum configured size of " + config.maxMessageBytes() + ".");
        }
        ByteBuffer bytes = ByteBuffer.wrap(built.array(), built.arrayOffset() + built.readerIndex(), size).slice();
        RecordBatch rebuilt = RecordBatch.of(bytes, 0);
        return new Validated(bytes, rebuilt, decoded.size(), rebuilt.maxTimestamp());
    }

    /** Kafka's {@code validateRecord} for each record, collecting the record errors. Not thread-safe. */
    private static final class Scan implements RecordVisitor {

        private final LogConfig config;
        private final long now;
        private final String partition;
        private final TimestampType batchTimestampType;
        private final List<RecordError> errors = new ArrayList<>(0);
        private boolean timestampError;
        private boolean consecutiveOffsets = true;
        private int firstBadOffset = -1;
        private int firstBadDelta;
        private long maxTimestamp = RecordBatch.NO_TIMESTAMP;
        private int count;

        Scan(LogConfig config, long now, String partition, TimestampType batchTimestampType) {
            this.config = config;
            this.now = now;
            this.partition = partition;
            this.batchTimestampType = batchTimestampType;
        }

        @Override
        public void record(int index, int offsetDelta, long timestamp, int keySize, int valueSize) {
            count++;
            String error = recordError(offsetDelta, timestamp, keySize);
            if (error != null) {
                errors.add(new RecordError(index, error));
                return;
            }
            if (timestamp > maxTimestamp) {
                maxTimestamp = timestamp;
            }
            if (offsetDelta != index && consecutiveOffsets) {
                consecutiveOffsets = false;
                firstBadOffset = index;
                firstBadDelta = offsetDelta;
            }
        }

        private String recordError(int offsetDelta, long timestamp, int keySize) {
            if (config.compact() && keySize < 0) {
                return "Compacted topic cannot accept message without key in topic partition " + partition;
            }
            if (!config.logAppendTime() && timestamp != RecordBatch.NO_TIMESTAMP) {
                long behind = now - timestamp;
                if (behind > config.timestampBeforeMaxMs() || -behind > config.timestampAfterMaxMs()) {
                    timestampError = true;
                    return "Timestamp " + timestamp + " of message with offset " + offsetDelta
                        + " is out of range. The timestamp should be within [" + (now - config.timestampBeforeMaxMs())
                        + ", " + (now + config.timestampAfterMaxMs()) + "]";
                }
            } else if (batchTimestampType == TimestampType.LOG_APPEND_TIME) {
                timestampError = true;
                return "Invalid timestamp type in message with offset " + offsetDelta + " and timestamp " + timestamp
                    + ". Producer should not set timestamp type to LogAppendTime.";
            }
            return null;
        }

        /** Kafka's {@code processRecordErrors}. */
        void throwRecordErrors() {
            if (errors.isEmpty()) {
                return;
            }
            if (timestampError) {
                throw new RecordValidationException(new InvalidTimestampException(
                    "One or more records have been rejected due to invalid timestamp"), errors);
            }
            throw new RecordValidationException(new InvalidRecordException("One or more records have been rejected "
                + "due to " + errors.size() + " record errors in total, and only showing the first three errors at "
                + "most: " + errors.subList(0, Math.min(errors.size(), MAX_REPORTED_ERRORS))), errors);
        }
    }
}
