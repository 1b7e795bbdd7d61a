package io.cairn.wire.record;

import io.cairn.wire.error.CorruptRecordException;
import io.cairn.wire.error.InvalidRecordException;
import io.netty.buffer.ByteBuf;

import java.nio.ByteBuffer;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * The record batches in a buffer (a produce request's records, a fetch response, a segment slice), as
 * {@link RecordBatch} views over slices of it. Like Kafka's {@code MemoryRecords.batches()}, iteration stops
 * quietly at a partial trailing batch (fetch responses end with one when the size limit cuts a batch), and throws
 * {@link CorruptRecordException} for a size field no batch can have.
 *
 * <p>{@link #frameAt} is the one reader of a batch's frame (its size field and magic) for every walker of record
 * bytes: this iterator, the produce request's checks and the log's append checks, each of which decides what a
 * partial or corrupt frame means for it.
 *
 * <p>Neither retains nor consumes the buffer; the views are valid while it is. Not thread-safe per iterator; the
 * {@code Iterable} itself may be iterated by several threads at once if nobody writes to the buffer.
 */
public final class RecordBatches implements Iterable<RecordBatch> {

    /** Smallest batchLength any message format has (magic 0's record overhead); Kafka rejects smaller ones. */
    static final int MIN_RECORD_OVERHEAD = 14;

    private final ByteBuf buffer;
    private final int maxBatchSize;

    private RecordBatches(ByteBuf buffer, int maxBatchSize) {
        this.buffer = buffer;
        this.maxBatchSize = maxBatchSize;
    }

    /** The batches in the readable bytes of {@code buffer}, of any size. */
    public static RecordBatches of(ByteBuf buffer) {
        return of(buffer, Integer.MAX_VALUE);
    }

    /**
     * The batches in the readable bytes of {@code buffer}.
     *
     * @param maxBatchSize the largest batchLength accepted; larger ones throw {@link CorruptRecordException}
     */
    public static RecordBatches of(ByteBuf buffer, int maxBatchSize) {
        return new RecordBatches(buffer, maxBatchSize);
    }

    /** What the bytes at one position hold, as Kafka's {@code ByteBufferLogInputStream.nextBatch} reads them. */
    public enum FrameKind {
        /** No byte left. */
        END,
        /** The start of a batch that the data ends before finishing (a fetch's size limit cuts one so). */
        PARTIAL,
        /** A size field no batch can have or a magic outside 0-2: {@link Frame#problem()} is Kafka's message. */
        CORRUPT,
        /** A complete batch frame of {@link Frame#sizeInBytes()} bytes; its content is not checked. */
        BATCH
    }

    /**
     * One batch frame.
     *
     * @param kind        what the bytes hold
     * @param sizeInBytes the whole batch's size (size field and log overhead) when the size field was read, else -1
     * @param magic       the batch's magic when read, else -1
     * @param problem     the CorruptRecordException message of a {@link FrameKind#CORRUPT} frame, else null
     */
    public record Frame(FrameKind kind, int sizeInBytes, byte magic, String problem) {

        private static final Frame END = new Frame(FrameKind.END, -1, (byte) -1, null);
        private static final Frame PARTIAL_HEADER = new Frame(FrameKind.PARTIAL, -1, (byte) -1, null);

        /** The corruption as the exception Kafka throws. */
        public CorruptRecordException corruption() {
            return new CorruptRecordException(problem);
        }
    }

    /** The frame at {@code at} of {@code buffer}, whose data ends at {@code end} (exclusive). */
    public static Frame frameAt(ByteBuf buffer, int at, int end) {
        return frameAt(buffer, at, end, Integer.MAX_VALUE);
    }

    private static Frame frameAt(ByteBuf buffer, int at, int end, int maxBatchSize) {
        int remaining = end - at;
        return frame(remaining, remaining >= RecordBatch.LOG_OVERHEAD
                ? buffer.getInt(at + RecordBatch.LENGTH_OFFSET) : 0,
                remaining > RecordBatch.MAGIC_OFFSET ? buffer.getByte(at + RecordBatch.MAGIC_OFFSET) : -1,
                maxBatchSize);
    }

    /** The frame at {@code at} of {@code buffer} (absolute positions), whose data ends at {@code end}. */
    public static Frame frameAt(ByteBuffer buffer, int at, int end) {
        int remaining = end - at;
        return frame(remaining, remaining >= RecordBatch.LOG_OVERHEAD
                ? buffer.getInt(at + RecordBatch.LENGTH_OFFSET) : 0,
                remaining > RecordBatch.MAGIC_OFFSET ? buffer.get(at + RecordBatch.MAGIC_OFFSET) : -1,
                Integer.MAX_VALUE);
    }

    /** Kafka's checks, in its order, on a frame's size field and magic (each read only when the bytes are there). */
    private static Frame frame(int remaining, int batchLength, byte magic, int maxBatchSize) {
        if (remaining < RecordBatch.LOG_OVERHEAD) {
            return remaining <= 0 ? Frame.END : Frame.PARTIAL_HEADER;
        }
        if (batchLength < MIN_RECORD_OVERHEAD) {
            return new Frame(FrameKind.CORRUPT, -1, (byte) -1, String.format(
                    "Record size %d is less than the minimum record overhead (%d)", batchLength,
                    MIN_RECORD_OVERHEAD));
        }
        if (batchLength > maxBatchSize) {
            return new Frame(FrameKind.CORRUPT, -1, (byte) -1, String.format(
                    "Record size %d exceeds the largest allowable message size (%d).", batchLength, maxBatchSize));
        }
        long batchSize = (long) batchLength + RecordBatch.LOG_OVERHEAD;
        int size = (int) Math.min(batchSize, Integer.MAX_VALUE);
        if (remaining <= RecordBatch.MAGIC_OFFSET) {
            return new Frame(FrameKind.PARTIAL, size, (byte) -1, null);
        }
        if (magic < 0 || magic > RecordBatch.MAGIC) {
            return new Frame(FrameKind.CORRUPT, size, magic, "Invalid magic found in record: " + magic);
        }
        return new Frame(remaining < batchSize ? FrameKind.PARTIAL : FrameKind.BATCH, size, magic, null);
    }

    /**
     * The number of bytes taken by complete batches from the start: the rest is a partial trailing batch. Reads only
     * each batch's frame, with the iterator's checks, and makes no view (a follower trims every fetched partition
     * with it).
     */
    public int sizeOfCompleteBatches() {
        int start = buffer.readerIndex();
        int end = buffer.writerIndex();
        int position = start;
        for (int size = completeBatchAt(position, end); size > 0; size = completeBatchAt(position, end)) {
            position += size;
        }
        return position - start;
    }

    /**
     * The size of the complete batch at {@code position}, or -1 at the end or at a partial trailing batch; throws
     * for a corrupt frame, a magic other than 2 or a size below the batch header.
     */
    private int completeBatchAt(int position, int end) {
        Frame frame = frameAt(buffer, position, end, maxBatchSize);
        if (frame.kind() == FrameKind.CORRUPT) {
            throw frame.corruption();
        }
        if (frame.kind() != FrameKind.BATCH) {
            return -1;
        }
        int batchSize = frame.sizeInBytes();
        if (frame.magic() != RecordBatch.MAGIC) {
            throw new InvalidRecordException("Record batch at offset " + buffer.getLong(position)
                    + " has magic " + frame.magic() + "; only magic " + RecordBatch.MAGIC
                    + " batches are supported");
        }
        if (batchSize < RecordBatch.RECORD_BATCH_OVERHEAD) {
            throw new CorruptRecordException("Record batch is corrupt (the size " + batchSize
                    + " is smaller than the minimum allowed overhead " + RecordBatch.RECORD_BATCH_OVERHEAD + ")");
        }
        return batchSize;
    }

    @Override
    public Iterator<RecordBatch> iterator() {
        return new BatchIterator(buffer.readerIndex(), buffer.writerIndex());
    }

    private final class BatchIterator implements Iterator<RecordBatch> {

        private final int end;
        private int position;
        private RecordBatch next;

        BatchIterator(int start, int end) {
            this.position = start;
            this.end = end;
        }

        @Override
        public boolean hasNext() {
            if (next == null) {
                next = readNext();
            }
            return next != null;
        }

        @Override
        public RecordBatch next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            RecordBatch batch = next;
            next = null;
            return batch;
        }

        private RecordBatch readNext() {
            int batchSize = completeBatchAt(position, end);
            if (batchSize < 0) {
                return null;
            }
            RecordBatch batch = RecordBatch.wrap(buffer.slice(position, batchSize));
            position += batchSize;
            return batch;
        }
    }
}
