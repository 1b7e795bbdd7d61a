package io.cairn.wire.record;

import io.cairn.wire.error.CorruptRecordException;
import io.cairn.wire.error.InvalidRecordException;
import io.netty.buffer.ByteBuf;

import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * The record batches in a buffer (a produce request's records, a fetch response, a segment slice), as
 * {@link RecordBatch} views over slices of it. Like Kafka's {@code MemoryRecords.batches()}, iteration stops
 * quietly at a partial trailing batch (fetch responses end with one when the size limit cuts a batch), and throws
 * {@link CorruptRecordException} for a size field no batch can have.
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

    /** The number of bytes taken by complete batches from the start: the rest is a partial trailing batch. */
    public int sizeOfCompleteBatches() {
        int size = 0;
        for (RecordBatch batch : this) {
            size += batch.sizeInBytes();
        }
        return size;
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
            int remaining = end - position;
            if (remaining < RecordBatch.LOG_OVERHEAD) {
                return null;
            }
            int batchLength = buffer.getInt(position + RecordBatch.LENGTH_OFFSET);
            if (batchLength < MIN_RECORD_OVERHEAD) {
                throw new CorruptRecordException(String.format(
                        "Record size %d is less than the minimum record overhead (%d)", batchLength,
                        MIN_RECORD_OVERHEAD));
            }
            if (batchLength > maxBatchSize) {
                throw new CorruptRecordException(String.format(
                        "Record size %d exceeds the largest allowable message size (%d).", batchLength, maxBatchSize));
            }
            if (remaining <= RecordBatch.MAGIC_OFFSET) {
                return null;
            }
            byte magic = buffer.getByte(position + RecordBatch.MAGIC_OFFSET);
            if (magic < 0 || magic > RecordBatch.MAGIC) {
                throw new CorruptRecordException("Invalid magic found in record: " + magic);
            }
            long batchSize = (long) batchLength + RecordBatch.LOG_OVERHEAD;
            if (remaining < batchSize) {
                return null;
            }
            if (magic != RecordBatch.MAGIC) {
                throw new InvalidRecordException("Record batch at offset " + buffer.getLong(position)
                        + " has magic " + magic + "; only magic " + RecordBatch.MAGIC + " batches are supported");
            }
            if (batchSize < RecordBatch.RECORD_BATCH_OVERHEAD) {
                throw new CorruptRecordException("Record batch is corrupt (the size " + batchSize
                        + " is smaller than the minimum allowed overhead " + RecordBatch.RECORD_BATCH_OVERHEAD + ")");
            }
            RecordBatch batch = RecordBatch.wrap(buffer.slice(position, (int) batchSize));
            position += (int) batchSize;
            return batch;
        }
    }
}
