package io.cairn.broker.coordinator;

import io.cairn.wire.record.CompressionType;
import io.cairn.wire.record.ControlRecordType;
import io.cairn.wire.record.EndTransactionMarker;
import io.cairn.wire.record.RecordBatch;
import io.cairn.wire.record.RecordBatchBuilder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds the record batches a coordinator shard appends to its partition: magic-2 batches, CREATE_TIME,
 * uncompressed, no headers, base offset 0 (the log assigns the offsets), each record keyed and valued by the kind's
 * {@link CoordinatorSerde} (a tombstone has a null value). A batch has no producer (id -1) unless it is
 * transactional; a transaction's end is a control batch holding one marker, as Kafka's
 * {@code MemoryRecords.withEndTransactionMarker}.
 *
 * <p>Thread-safety: stateless, thread-safe.
 */
public final class CoordinatorBatches {

    /**
     * The most bytes a record adds to a batch beyond its key and value: attributes (1), timestamp delta (a varlong,
     * at most 10), offset delta and length (varints, at most 5 each), the key and value lengths (5 each) and the
     * header count (1). The runtime checks batch sizes against {@code max.message.bytes} with this bound.
     */
    static final int MAX_RECORD_OVERHEAD = 32;

    private CoordinatorBatches() {
    }

    /** A record's serialized key and value (null for a tombstone). Immutable once built. */
    public record Encoded(byte[] key, byte[] value) {

        /** An upper bound of what this record adds to a batch. */
        public int sizeUpperBound() {
            return MAX_RECORD_OVERHEAD + key.length + (value == null ? 0 : value.length);
        }
    }

    /**
     * Serializes {@code records} in order.
     *
     * @throws IllegalArgumentException when a record does not serialize
     */
    public static <R> List<Encoded> encode(CoordinatorSerde<R> serde, List<R> records) {
        List<Encoded> encoded = new ArrayList<>(records.size());
        for (R record : records) {
            byte[] key = serde.keyBytes(record);
            if (key == null) {
                throw new IllegalArgumentException("A coordinator record needs a key: " + record);
            }
            encoded.add(new Encoded(key, serde.valueBytes(record)));
        }
        return encoded;
    }

    /**
     * One batch holding {@code records} in order, every record stamped {@code timestampMs}; transactional when
     * {@code producerId} ≥ 0 (sequence -1: the log keeps no sequence for a coordinator's batches).
     *
     * @return a heap buffer positioned at the batch's first byte, ready for {@code Partition.appendRecordsToLeader}
     * @throws IllegalArgumentException when {@code records} is empty or the timestamp is negative
     */
    public static ByteBuffer toBatch(List<Encoded> records, long timestampMs, long producerId, short producerEpoch) {
        if (records.isEmpty()) {
            throw new IllegalArgumentException("A coordinator batch needs at least one record");
        }
        if (timestampMs < 0) {
            throw new IllegalArgumentException("Invalid timestamp " + timestampMs);
        }
        RecordBatchBuilder builder = new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, CompressionType.NONE);
        if (producerId >= 0) {
            builder.producer(producerId, producerEpoch, RecordBatch.NO_SEQUENCE).transactional(true);
        }
        for (Encoded record : records) {
            builder.append(timestampMs, record.key(), record.value());
        }
        return copyOut(builder.build());
    }

    /** The control batch ending {@code producerId}'s transaction: a COMMIT or ABORT marker. */
    public static ByteBuffer endTransactionMarker(long timestampMs, long producerId, short producerEpoch,
                                                  int coordinatorEpoch, boolean commit) {
        EndTransactionMarker marker = new EndTransactionMarker(commit ? ControlRecordType.COMMIT
            : ControlRecordType.ABORT, coordinatorEpoch);
        return copyOut(RecordBatchBuilder.endTransactionMarker(UnpooledByteBufAllocator.DEFAULT, 0L, timestampMs,
            RecordBatch.NO_PARTITION_LEADER_EPOCH, producerId, producerEpoch, marker));
    }

    private static ByteBuffer copyOut(ByteBuf batch) {
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
