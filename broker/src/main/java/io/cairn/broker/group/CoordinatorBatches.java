package io.cairn.broker.group;

import io.cairn.wire.record.CompressionType;
import io.cairn.wire.record.RecordBatchBuilder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * Builds the record batches a coordinator shard appends to its {@code __consumer_offsets} partition: one magic-2
 * batch per write, CREATE_TIME, uncompressed, no producer (id -1), no headers, base offset 0 (the log assigns the
 * offsets), each record keyed and valued by {@link GroupRecordSerde} (a tombstone has a null value).
 *
 * <p>Thread-safety: stateless, thread-safe.
 */
public final class CoordinatorBatches {

    private CoordinatorBatches() {
    }

    /**
     * One batch holding {@code records} in order, every record stamped {@code timestampMs}.
     *
     * @return a heap buffer positioned at the batch's first byte, ready for {@code PartitionLog.appendAsLeader}
     * @throws IllegalArgumentException when {@code records} is empty, a record does not serialize, or the timestamp
     *                                  is negative
     */
    public static ByteBuffer toBatch(List<CoordinatorRecord> records, long timestampMs) {
        if (records.isEmpty()) {
            throw new IllegalArgumentException("A coordinator batch needs at least one record");
        }
        if (timestampMs < 0) {
            throw new IllegalArgumentException("Invalid timestamp " + timestampMs);
        }
        RecordBatchBuilder builder = new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, CompressionType.NONE);
        for (CoordinatorRecord record : records) {
            builder.append(timestampMs, GroupRecordSerde.keyBytes(record), GroupRecordSerde.valueBytes(record));
        }
        ByteBuf batch = builder.build();
        try {
            // Copied out of the Netty buffer: the log's append takes a ByteBuffer the caller keeps.
            ByteBuffer out = ByteBuffer.allocate(batch.readableBytes());
            batch.getBytes(batch.readerIndex(), out);
            return out.flip();
        } finally {
            batch.release();
        }
    }
}
