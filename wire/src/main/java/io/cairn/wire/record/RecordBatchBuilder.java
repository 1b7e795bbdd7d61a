package io.cairn.wire.record;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.buffer.Unpooled;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Builds one magic-2 record batch, for the batches the broker writes itself (transaction markers, coordinator
 * records, batches rebuilt by validation or the cleaner): Kafka's {@code MemoryRecordsBuilder} rules for offsets,
 * timestamps and flags, any {@link CompressionType}, CRC32C written last.
 *
 * <p>Appended records are held as {@link Record} values; {@link #build()} encodes them into a new buffer from the
 * allocator, which the caller owns and releases. The builder holds no buffer between calls, so an abandoned builder
 * leaks nothing. Not thread-safe.
 */
public final class RecordBatchBuilder {

    private final ByteBufAllocator allocator;
    private final CompressionType compression;
    private int compressionLevel;
    private long baseOffset;
    private int partitionLeaderEpoch = RecordBatch.NO_PARTITION_LEADER_EPOCH;
    private TimestampType timestampType = TimestampType.CREATE_TIME;
    private long logAppendTime = RecordBatch.NO_TIMESTAMP;
    private long producerId = RecordBatch.NO_PRODUCER_ID;
    private short producerEpoch = RecordBatch.NO_PRODUCER_EPOCH;
    private int baseSequence = RecordBatch.NO_SEQUENCE;
    private boolean transactional;
    private boolean control;
    private long deleteHorizonMs = RecordBatch.NO_TIMESTAMP;
    private final List<Record> records = new ArrayList<>();

    /**
     * @param allocator   where {@link #build()} allocates the batch
     * @param compression the codec of the records, at its default level
     */
    public RecordBatchBuilder(ByteBufAllocator allocator, CompressionType compression) {
        this.allocator = Objects.requireNonNull(allocator, "allocator");
        this.compression = Objects.requireNonNull(compression, "compression");
        this.compressionLevel = compression.defaultLevel();
    }

    /** A control batch holding one transaction marker, as Kafka's {@code MemoryRecords.withEndTransactionMarker}. */
    public static ByteBuf endTransactionMarker(ByteBufAllocator allocator, long offset, long timestamp,
                                              int partitionLeaderEpoch, long producerId, short producerEpoch,
                                              EndTransactionMarker marker) {
        return new RecordBatchBuilder(allocator, CompressionType.NONE)
                .baseOffset(offset)
                .partitionLeaderEpoch(partitionLeaderEpoch)
                .producer(producerId, producerEpoch, RecordBatch.NO_SEQUENCE)
                .transactional(true)
                .control(true)
                .append(timestamp, marker.keyBytes(), marker.valueBytes())
                .build();
    }

    /** The codec level (gzip 1-9, lz4 1-17, zstd -131072..22); the default level otherwise. */
    public RecordBatchBuilder compressionLevel(int level) {
        if (!compression.isValidLevel(level)) {
            throw new IllegalArgumentException(compression.configName() + " doesn't support given compression level: "
                    + level);
        }
        this.compressionLevel = level;
        return this;
    }

    /** The offset of the first record appended with {@link #append}; default 0. */
    public RecordBatchBuilder baseOffset(long offset) {
        requireNoRecords();
        this.baseOffset = offset;
        return this;
    }

    public RecordBatchBuilder partitionLeaderEpoch(int epoch) {
        this.partitionLeaderEpoch = epoch;
        return this;
    }

    /** Stamps the batch LOG_APPEND_TIME with {@code time}: maxTimestamp holds it and readers see it on every record. */
    public RecordBatchBuilder logAppendTime(long time) {
        if (time < 0) {
            throw new IllegalArgumentException("Invalid log append time " + time);
        }
        this.timestampType = TimestampType.LOG_APPEND_TIME;
        this.logAppendTime = time;
        return this;
    }

    /** Producer id, epoch and the sequence of the first record; defaults are "no producer" (-1, -1, -1). */
    public RecordBatchBuilder producer(long id, short epoch, int sequence) {
        this.producerId = id;
        this.producerEpoch = epoch;
        this.baseSequence = sequence;
        return this;
    }

    public RecordBatchBuilder transactional(boolean value) {
        this.transactional = value;
        return this;
    }

    /** Marks the batch as a control batch; its records must carry control record keys. */
    public RecordBatchBuilder control(boolean value) {
        this.control = value;
        return this;
    }

    /** Sets the delete horizon (the cleaner's): stored in baseTimestamp, records are relative to it. */
    public RecordBatchBuilder deleteHorizonMs(long value) {
        requireNoRecords();
        this.deleteHorizonMs = value;
        return this;
    }

    /** Appends a record at the next offset (baseOffset, then one past the last). */
    public RecordBatchBuilder append(long timestamp, byte[] key, byte[] value) {
        return append(timestamp, key, value, List.of());
    }

    /** Appends a record with headers at the next offset. */
    public RecordBatchBuilder append(long timestamp, byte[] key, byte[] value, List<Header> headers) {
        long offset = records.isEmpty() ? baseOffset : records.get(records.size() - 1).offset() + 1;
        return appendWithOffset(offset, timestamp, key, value, headers);
    }

    /**
     * Appends a record at {@code offset}, which must be above the last one, at or above baseOffset and within an int
     * of it.
     */
    public RecordBatchBuilder appendWithOffset(long offset, long timestamp, byte[] key, byte[] value,
                                               List<Header> headers) {
        if (!records.isEmpty()) {
            long last = records.get(records.size() - 1).offset();
            if (offset <= last) {
                throw new IllegalArgumentException(String.format(
                        "Illegal offset %d following previous offset %d (Offsets must increase monotonically).",
                        offset, last));
            }
        }
        if (offset < baseOffset) {
            throw new IllegalArgumentException("Offset " + offset + " is below the base offset " + baseOffset);
        }
        if (offset - baseOffset > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("Offset " + offset + " is too far from base offset " + baseOffset);
        }
        if (timestamp < 0 && timestamp != RecordBatch.NO_TIMESTAMP) {
            throw new IllegalArgumentException("Invalid negative timestamp " + timestamp);
        }
        if (control && key == null) {
            throw new IllegalArgumentException("Control records must have a key");
        }
        records.add(new Record(offset, timestamp, RecordBatch.NO_SEQUENCE, key, value, headers));
        return this;
    }

    public int numRecords() {
        return records.size();
    }

    /**
     * Encodes the batch into a new buffer (the caller releases it). With no records appended, an empty buffer: an
     * empty batch is not a thing the broker writes from here.
     */
    public ByteBuf build() {
        if (records.isEmpty()) {
            return allocator.buffer(0, 0);
        }
        long baseTimestamp = deleteHorizonMs != RecordBatch.NO_TIMESTAMP ? deleteHorizonMs : records.get(0).timestamp();
        // A short-lived heap scratch buffer for the uncompressed records: never escapes, released below.
        ByteBuf raw = Unpooled.buffer(estimateUncompressedSize());
        ByteBuf out = null;
        boolean success = false;
        try {
            long maxTimestamp = RecordBatch.NO_TIMESTAMP;
            for (Record record : records) {
                RecordCodec.writeRecord(raw, (int) (record.offset() - baseOffset), record.timestamp() - baseTimestamp,
                        record);
                maxTimestamp = Math.max(maxTimestamp, record.timestamp());
            }
            out = allocator.buffer(RecordBatch.RECORD_BATCH_OVERHEAD + raw.readableBytes());
            out.writerIndex(RecordBatch.RECORD_BATCH_OVERHEAD);
            writeRecords(raw, out);
            long headerMaxTimestamp = timestampType == TimestampType.LOG_APPEND_TIME ? logAppendTime : maxTimestamp;
            writeHeader(out, baseTimestamp, headerMaxTimestamp);
            success = true;
            return out;
        } finally {
            raw.release();
            if (!success && out != null) {
                out.release();
            }
        }
    }

    private int estimateUncompressedSize() {
        int size = 0;
        for (Record record : records) {
            size += 24 + Math.max(0, record.keySize()) + Math.max(0, record.valueSize()) + 16 * record.headers().size();
        }
        return size;
    }

    private void writeRecords(ByteBuf raw, ByteBuf out) {
        if (compression == CompressionType.NONE) {
            out.writeBytes(raw);
            return;
        }
        try (OutputStream stream = Compression.wrapForOutput(compression, compressionLevel,
                new ByteBufOutputStream(out))) {
            raw.readBytes(stream, raw.readableBytes());
        } catch (IOException e) {
            // Writing to a ByteBuf does not fail; an IOException here is a codec bug.
            throw new UncheckedIOException("Failed to compress record batch with " + compression, e);
        }
    }

    private void writeHeader(ByteBuf out, long baseTimestamp, long maxTimestamp) {
        if (baseTimestamp < 0 && baseTimestamp != RecordBatch.NO_TIMESTAMP) {
            throw new IllegalArgumentException("Invalid message timestamp " + baseTimestamp);
        }
        int attributes = compression.id();
        if (timestampType == TimestampType.LOG_APPEND_TIME) {
            attributes |= RecordBatch.TIMESTAMP_TYPE_MASK;
        }
        if (transactional) {
            attributes |= RecordBatch.TRANSACTIONAL_FLAG_MASK;
        }
        if (control) {
            attributes |= RecordBatch.CONTROL_FLAG_MASK;
        }
        if (deleteHorizonMs != RecordBatch.NO_TIMESTAMP) {
            attributes |= RecordBatch.DELETE_HORIZON_FLAG_MASK;
        }
        long lastOffset = records.get(records.size() - 1).offset();
        out.setLong(RecordBatch.BASE_OFFSET_OFFSET, baseOffset);
        out.setInt(RecordBatch.LENGTH_OFFSET, out.writerIndex() - RecordBatch.LOG_OVERHEAD);
        out.setInt(RecordBatch.PARTITION_LEADER_EPOCH_OFFSET, partitionLeaderEpoch);
        out.setByte(RecordBatch.MAGIC_OFFSET, RecordBatch.MAGIC);
        out.setShort(RecordBatch.ATTRIBUTES_OFFSET, attributes);
        out.setInt(RecordBatch.LAST_OFFSET_DELTA_OFFSET, (int) (lastOffset - baseOffset));
        out.setLong(RecordBatch.BASE_TIMESTAMP_OFFSET, baseTimestamp);
        out.setLong(RecordBatch.MAX_TIMESTAMP_OFFSET, maxTimestamp);
        out.setLong(RecordBatch.PRODUCER_ID_OFFSET, producerId);
        out.setShort(RecordBatch.PRODUCER_EPOCH_OFFSET, producerEpoch);
        out.setInt(RecordBatch.BASE_SEQUENCE_OFFSET, baseSequence);
        out.setInt(RecordBatch.RECORDS_COUNT_OFFSET, records.size());
        int crcLength = out.writerIndex() - RecordBatch.ATTRIBUTES_OFFSET;
        out.setInt(RecordBatch.CRC_OFFSET, (int) RecordBatch.crc32c(out, RecordBatch.ATTRIBUTES_OFFSET, crcLength));
    }

    private void requireNoRecords() {
        if (!records.isEmpty()) {
            throw new IllegalStateException("Set the base offset and delete horizon before appending records");
        }
    }
}
