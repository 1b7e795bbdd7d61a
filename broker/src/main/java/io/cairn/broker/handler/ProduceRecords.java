package io.cairn.broker.handler;

import io.cairn.log.LogConfig;
import io.cairn.log.record.BatchHeader;
import io.cairn.log.record.BatchRecords;
import io.cairn.log.record.LogRecord;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ProduceResponseData.BatchIndexAndErrorMessage;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The record checks Kafka makes on a produce request outside the log, and the record errors of KIP-467.
 *
 * <p>Kafka reads a partition's records with {@code MemoryRecords.batches()}: a size field below 14 or a magic
 * outside 0-2 is CORRUPT_MESSAGE, a batch cut short by the end of the data ends the iteration (the bytes are
 * dropped). {@code ProduceRequest.validateRecords} then wants exactly one batch of magic 2, and no zstd before v7.
 * When the log refuses records for a record-level reason (a keyless record on a compacted topic, a timestamp out
 * of range), Kafka names each offending record by its index in the batch ({@code LogValidator}); the log reports
 * only the first, so {@link #recordErrors} finds them all again in the unchanged batch.
 *
 * <p>Stateless and thread-safe.
 */
final class ProduceRecords {

    /** Kafka's {@code Records.LOG_OVERHEAD}: offset and size. */
    private static final int LOG_OVERHEAD = 12;
    /** Kafka's {@code LegacyRecord.RECORD_OVERHEAD_V0}: the smallest size field a batch may have. */
    private static final int MIN_SIZE_FIELD = 14;
    /** Offset, size, leader epoch and magic. */
    private static final int HEADER_SIZE_UP_TO_MAGIC = 17;
    private static final int ZSTD = 4;

    private ProduceRecords() {
    }

    /**
     * What Kafka's batch iterator sees in one partition's records.
     *
     * @param corruptFirst the CORRUPT_MESSAGE text met while looking for the first batch, or null
     * @param batches how many complete batches precede the end or a corruption, counting at most two
     * @param corruptSecond the CORRUPT_MESSAGE text met while looking for a second batch, or null
     * @param firstBytes the size of the first batch, or 0
     * @param firstMagic the magic of the first batch
     * @param transactional whether the first batch is a transactional v2 batch
     */
    record Scan(String corruptFirst, int batches, String corruptSecond, int firstBytes, byte firstMagic,
                boolean transactional, long producerId, short producerEpoch, int compression) {
    }

    /** Reads at most two batch headers of {@code records} (null counts as empty) as Kafka's iterator does. */
    static Scan scan(ByteBuf records) {
        if (records == null) {
            return new Scan(null, 0, null, 0, (byte) -1, false, -1L, (short) -1, 0);
        }
        int start = records.readerIndex();
        int end = records.writerIndex();
        Object first = nextBatch(records, start, end);
        if (!(first instanceof Integer)) {
            return new Scan((String) first, 0, null, 0, (byte) -1, false, -1L, (short) -1, 0);
        }
        int firstBytes = (Integer) first;
        if (firstBytes == 0) {
            return new Scan(null, 0, null, 0, (byte) -1, false, -1L, (short) -1, 0);
        }
        byte magic = records.getByte(start + BatchHeader.MAGIC);
        boolean v2 = magic == BatchHeader.MAGIC_V2 && firstBytes >= BatchHeader.SIZE;
        short attributes = v2 ? records.getShort(start + BatchHeader.ATTRIBUTES) : 0;
        long producerId = v2 ? records.getLong(start + BatchHeader.PRODUCER_ID) : -1L;
        short producerEpoch = v2 ? records.getShort(start + BatchHeader.PRODUCER_EPOCH) : -1;
        Object second = nextBatch(records, start + firstBytes, end);
        int batches = second instanceof Integer && (Integer) second > 0 ? 2 : 1;
        return new Scan(null, batches, second instanceof String ? (String) second : null, firstBytes, magic,
                v2 && (attributes & BatchHeader.TRANSACTIONAL_MASK) != 0, producerId, producerEpoch,
                attributes & BatchHeader.COMPRESSION_MASK);
    }

    /** The size of the batch at {@code at}, 0 when the data ends first, or the corruption message. */
    private static Object nextBatch(ByteBuf records, int at, int end) {
        long remaining = end - at;
        if (remaining < LOG_OVERHEAD) {
            return 0;
        }
        int size = records.getInt(at + LOG_OVERHEAD - 4);
        if (size < MIN_SIZE_FIELD) {
            return "Record size " + size + " is less than the minimum record overhead (" + MIN_SIZE_FIELD + ")";
        }
        if (remaining < HEADER_SIZE_UP_TO_MAGIC) {
            return 0;
        }
        byte magic = records.getByte(at + BatchHeader.MAGIC);
        if (magic < 0 || magic > BatchHeader.MAGIC_V2) {
            return "Invalid magic found in record: " + magic;
        }
        long batchSize = (long) size + LOG_OVERHEAD;
        return remaining < batchSize ? 0 : (int) batchSize;
    }

    /** Kafka's {@code ProduceRequest.validateRecords} for one partition: null when the records may go to the log. */
    static Errors validate(short version, Scan scan) {
        if (scan.corruptFirst() != null) {
            return Errors.CORRUPT_MESSAGE;
        }
        if (scan.batches() == 0 || scan.firstMagic() != BatchHeader.MAGIC_V2) {
            return Errors.INVALID_RECORD;
        }
        if (scan.firstBytes() < BatchHeader.SIZE) {
            return Errors.CORRUPT_MESSAGE;
        }
        if (version < 7 && scan.compression() == ZSTD) {
            return Errors.UNSUPPORTED_COMPRESSION_TYPE;
        }
        if (scan.corruptSecond() != null) {
            return Errors.CORRUPT_MESSAGE;
        }
        return scan.batches() > 1 ? Errors.INVALID_RECORD : null;
    }

    /**
     * Kafka's batch rule the log leaves out ({@code LogValidator.validateBatch}): an idempotent batch needs a
     * sequence number. Checked after the size and CRC rules that come first in Kafka.
     *
     * @return the INVALID_RECORD message, or null
     */
    static String invalidSequence(ByteBuffer batch, LogConfig config, TopicPartition partition) {
        int at = batch.position();
        long producerId = BatchHeader.producerId(batch, at);
        int baseSequence = BatchHeader.baseSequence(batch, at);
        if (producerId < 0 || baseSequence >= 0) {
            return null;
        }
        int size = BatchHeader.sizeInBytes(batch, at);
        if (size > config.maxMessageBytes() || size > batch.remaining()
                || BatchHeader.crc(batch, at) != BatchHeader.computeCrc(batch, at, size)) {
            return null;
        }
        return "Invalid sequence number " + baseSequence + " in record batch with producerId " + producerId
                + " in topic partition " + partition;
    }

    /**
     * Kafka's record validation errors.
     *
     * @param error INVALID_RECORD or INVALID_TIMESTAMP
     * @param message the summary Kafka puts in {@code error_message}
     * @param recordErrors one entry per offending record
     */
    record RecordErrors(Errors error, String message, List<BatchIndexAndErrorMessage> recordErrors) {
    }

    /**
     * The record errors of the (unchanged) batch the log refused, as Kafka's {@code LogValidator} reports them, or
     * null when the refusal was about the batch as a whole (Kafka reports those without record errors).
     */
    static RecordErrors recordErrors(ByteBuffer batch, LogConfig config, long now, String partition) {
        int at = batch.position();
        if (batch.remaining() < BatchHeader.SIZE || BatchHeader.isControl(batch, at)) {
            return null;
        }
        int count = BatchHeader.recordsCount(batch, at);
        if (count <= 0 || count != BatchHeader.lastOffsetDelta(batch, at) + 1) {
            return null;
        }
        List<LogRecord> records;
        try {
            records = BatchRecords.decode(batch, at);
        } catch (RuntimeException e) {
            return null;
        }
        List<BatchIndexAndErrorMessage> errors = new ArrayList<>();
        List<String> described = new ArrayList<>();
        boolean timestampError = false;
        for (int i = 0; i < records.size(); i++) {
            String message = recordError(records.get(i), config, now, partition);
            if (message != null) {
                timestampError |= message.startsWith("Timestamp ");
                errors.add(new BatchIndexAndErrorMessage().setBatchIndex(i).setBatchIndexErrorMessage(message));
                described.add("RecordError(batchIndex=" + i + ", message='" + message + "')");
            }
        }
        if (errors.isEmpty()) {
            return null;
        }
        if (timestampError) {
            return new RecordErrors(Errors.INVALID_TIMESTAMP,
                    "One or more records have been rejected due to invalid timestamp", errors);
        }
        return new RecordErrors(Errors.INVALID_RECORD, "One or more records have been rejected due to "
                + errors.size() + " record errors in total, and only showing the first three errors at most: "
                + described.subList(0, Math.min(described.size(), 3)), errors);
    }

    private static String recordError(LogRecord record, LogConfig config, long now, String partition) {
        if (config.compact() && record.key() == null) {
            return "Compacted topic cannot accept message without key in topic partition " + partition;
        }
        long timestamp = record.timestamp();
        if (!config.logAppendTime() && timestamp != BatchHeader.NO_TIMESTAMP) {
            long behind = now - timestamp;
            if (behind > config.timestampBeforeMaxMs() || -behind > config.timestampAfterMaxMs()) {
                return "Timestamp " + timestamp + " of message with offset " + record.offset()
                        + " is out of range. The timestamp should be within [" + (now - config.timestampBeforeMaxMs())
                        + ", " + (now + config.timestampAfterMaxMs()) + "]";
            }
        }
        return null;
    }
}
