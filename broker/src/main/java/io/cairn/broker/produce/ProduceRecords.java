package io.cairn.broker.produce;

import io.cairn.wire.error.Errors;
import io.cairn.wire.record.RecordBatch;
import io.cairn.wire.record.RecordBatches;
import io.netty.buffer.ByteBuf;

/**
 * The record checks Kafka makes on a produce request outside the log, and the record errors of KIP-467.
 *
 * <p>Kafka reads a partition's records with {@code MemoryRecords.batches()}, as
 * {@link RecordBatches#frameAt} does: a size field below 14 or a magic outside 0-2 is CORRUPT_MESSAGE, a batch cut
 * short by the end of the data ends the iteration (the bytes are dropped). {@code ProduceRequest.validateRecords}
 * then wants exactly one batch of magic 2, and no zstd before v7. Everything about the batch's content is the
 * log's ({@code io.cairn.log.LogValidator}).
 *
 * <p>Stateless and thread-safe.
 */
final class ProduceRecords {

    private static final int ZSTD = 4;
    private static final int COMPRESSION_MASK = 0x07;
    private static final int TRANSACTIONAL_MASK = 0x10;
    private static final Scan EMPTY = new Scan(null, 0, null, 0, (byte) -1, false, -1L, (short) -1, -1, 0);

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
     * @param baseSequence the first batch's base sequence (v2), or -1
     */
    record Scan(String corruptFirst, int batches, String corruptSecond, int firstBytes, byte firstMagic,
                boolean transactional, long producerId, short producerEpoch, int baseSequence, int compression) {
    }

    /** Reads at most two batch frames of {@code records} (null counts as empty) as Kafka's iterator does. */
    static Scan scan(ByteBuf records) {
        if (records == null) {
            return EMPTY;
        }
        int start = records.readerIndex();
        int end = records.writerIndex();
        RecordBatches.Frame first = RecordBatches.frameAt(records, start, end);
        if (first.kind() == RecordBatches.FrameKind.CORRUPT) {
            return new Scan(first.problem(), 0, null, 0, (byte) -1, false, -1L, (short) -1, -1, 0);
        }
        if (first.kind() != RecordBatches.FrameKind.BATCH) {
            return EMPTY;
        }
        int firstBytes = first.sizeInBytes();
        byte magic = first.magic();
        boolean v2 = magic == RecordBatch.MAGIC && firstBytes >= RecordBatch.RECORD_BATCH_OVERHEAD;
        short attributes = v2 ? records.getShort(start + RecordBatch.ATTRIBUTES_OFFSET) : 0;
        long producerId = v2 ? records.getLong(start + RecordBatch.PRODUCER_ID_OFFSET) : -1L;
        short producerEpoch = v2 ? records.getShort(start + RecordBatch.PRODUCER_EPOCH_OFFSET) : -1;
        int baseSequence = v2 ? records.getInt(start + RecordBatch.BASE_SEQUENCE_OFFSET) : -1;
        RecordBatches.Frame second = RecordBatches.frameAt(records, start + firstBytes, end);
        int batches = second.kind() == RecordBatches.FrameKind.BATCH ? 2 : 1;
        return new Scan(null, batches, second.problem(), firstBytes, magic,
                v2 && (attributes & TRANSACTIONAL_MASK) != 0, producerId, producerEpoch, baseSequence,
                attributes & COMPRESSION_MASK);
    }

    /** Kafka's {@code ProduceRequest.validateRecords} for one partition: null when the records may go to the log. */
    static Errors validate(short version, Scan scan) {
        if (scan.corruptFirst() != null) {
            return Errors.CORRUPT_MESSAGE;
        }
        if (scan.batches() == 0 || scan.firstMagic() != RecordBatch.MAGIC) {
            return Errors.INVALID_RECORD;
        }
        if (scan.firstBytes() < RecordBatch.RECORD_BATCH_OVERHEAD) {
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
}
