package io.cairn.wire.record;

import io.cairn.wire.error.CorruptRecordException;
import io.cairn.wire.error.InvalidRecordException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.Function;
import java.util.zip.CRC32C;

/**
 * A view over one Kafka record batch of magic 2 in a {@link ByteBuf}: header accessors, CRC32C validation, the
 * setters the broker needs, and record decoding. Header layout (big-endian, 61 bytes):
 *
 * <pre>
 * offset  size  field
 *  0      8     baseOffset
 *  8      4     batchLength            bytes after this field (sizeInBytes - 12)
 * 12      4     partitionLeaderEpoch   outside the CRC: the broker sets it without recomputing
 * 16      1     magic                  2
 * 17      4     crc                    CRC-32C (Castagnoli) of bytes 21..end, as uint32
 * 21      2     attributes             bits 0-2 compression, 3 timestamp type, 4 transactional, 5 control,
 *                                      6 delete horizon set (baseTimestamp is then the delete horizon)
 * 23      4     lastOffsetDelta
 * 27      8     baseTimestamp
 * 35      8     maxTimestamp           for LOG_APPEND_TIME: the append time of every record
 * 43      8     producerId
 * 51      2     producerEpoch
 * 53      4     baseSequence
 * 57      4     recordCount
 * 61      ...   records                compressed as one stream when the compression bits are not 0
 * </pre>
 *
 * <p>The view neither retains nor releases the buffer: it is valid while the buffer is, and the caller owns the
 * buffer's reference count. Accessors read at absolute indexes; reads are safe from several threads while nobody
 * writes, the setters are not thread-safe.
 */
public final class RecordBatch {

    public static final int BASE_OFFSET_OFFSET = 0;
    public static final int LENGTH_OFFSET = 8;
    public static final int PARTITION_LEADER_EPOCH_OFFSET = 12;
    public static final int MAGIC_OFFSET = 16;
    public static final int CRC_OFFSET = 17;
    public static final int ATTRIBUTES_OFFSET = 21;
    public static final int LAST_OFFSET_DELTA_OFFSET = 23;
    public static final int BASE_TIMESTAMP_OFFSET = 27;
    public static final int MAX_TIMESTAMP_OFFSET = 35;
    public static final int PRODUCER_ID_OFFSET = 43;
    public static final int PRODUCER_EPOCH_OFFSET = 51;
    public static final int BASE_SEQUENCE_OFFSET = 53;
    public static final int RECORDS_COUNT_OFFSET = 57;
    public static final int RECORDS_OFFSET = 61;
    /** Size of the header: the smallest valid batch. */
    public static final int RECORD_BATCH_OVERHEAD = RECORDS_OFFSET;
    /** baseOffset and batchLength: the prefix every message format shares. */
    public static final int LOG_OVERHEAD = 12;

    public static final byte MAGIC = 2;
    public static final long NO_PRODUCER_ID = -1L;
    public static final short NO_PRODUCER_EPOCH = -1;
    public static final int NO_SEQUENCE = -1;
    public static final int NO_PARTITION_LEADER_EPOCH = -1;
    public static final long NO_TIMESTAMP = -1L;

    /**
     * Default bound on the decompressed size of one batch for {@link #records()}: well above what producers build
     * (their {@code batch.size} bounds the compressed size, typical ratios are below 10x) and small enough that a
     * hostile batch cannot exhaust the heap.
     */
    public static final int DEFAULT_MAX_UNCOMPRESSED_BYTES = 64 * 1024 * 1024;

    static final int COMPRESSION_CODEC_MASK = 0x07;
    static final int TIMESTAMP_TYPE_MASK = 0x08;
    static final int TRANSACTIONAL_FLAG_MASK = 0x10;
    static final int CONTROL_FLAG_MASK = 0x20;
    static final int DELETE_HORIZON_FLAG_MASK = 0x40;

    private final ByteBuf buf;

    private RecordBatch(ByteBuf buf) {
        this.buf = buf;
    }

    /**
     * A view over the readable bytes of {@code buffer}, which hold one batch (index 0 of the view is the batch's
     * first byte). Neither retained nor consumed. The header accessors need only the first 61 bytes (a header read
     * from a file works); {@link #isValid()}, {@link #ensureValid()} and {@link #records()} need the whole batch.
     *
     * @throws CorruptRecordException if fewer than {@link #RECORD_BATCH_OVERHEAD} bytes are readable
     */
    public static RecordBatch wrap(ByteBuf buffer) {
        if (buffer.readableBytes() < RECORD_BATCH_OVERHEAD) {
            throw new CorruptRecordException("Record batch is corrupt (the size " + buffer.readableBytes()
                    + " is smaller than the minimum allowed overhead " + RECORD_BATCH_OVERHEAD + ")");
        }
        return new RecordBatch(buffer.slice());
    }

    /**
     * A view over the batch that starts at absolute index {@code at} of {@code buffer} (its position and limit are
     * not changed; the view ends at the batch's declared end, or at the limit when that comes first, so a header
     * alone is enough for the header accessors). Writes through the setters reach {@code buffer}'s memory.
     *
     * @throws CorruptRecordException if fewer than {@link #RECORD_BATCH_OVERHEAD} bytes are there from {@code at}
     */
    public static RecordBatch of(ByteBuffer buffer, int at) {
        int available = buffer.limit() - at;
        if (available < RECORD_BATCH_OVERHEAD) {
            throw new CorruptRecordException("Record batch is corrupt (the size " + Math.max(available, 0)
                    + " is smaller than the minimum allowed overhead " + RECORD_BATCH_OVERHEAD + ")");
        }
        long declared = LOG_OVERHEAD + (long) buffer.getInt(at + LENGTH_OFFSET);
        int size = (int) Math.max(RECORD_BATCH_OVERHEAD, Math.min(declared, available));
        ByteBuffer window = buffer.duplicate().order(ByteOrder.BIG_ENDIAN);
        window.limit(at + size).position(at);
        return new RecordBatch(Unpooled.wrappedBuffer(window));
    }

    /**
     * The bytes of this batch: a duplicate with its own indexes over the same memory, not retained (call
     * {@code retain()} on it to keep it beyond the life of the wrapped buffer).
     */
    public ByteBuf buffer() {
        return buf.duplicate();
    }

    public long baseOffset() {
        return buf.getLong(BASE_OFFSET_OFFSET);
    }

    /** The declared size: {@link #LOG_OVERHEAD} plus the batchLength field. */
    public int sizeInBytes() {
        return LOG_OVERHEAD + buf.getInt(LENGTH_OFFSET);
    }

    public int partitionLeaderEpoch() {
        return buf.getInt(PARTITION_LEADER_EPOCH_OFFSET);
    }

    public byte magic() {
        return buf.getByte(MAGIC_OFFSET);
    }

    /** The stored CRC, as the unsigned 32-bit value. */
    public long checksum() {
        return buf.getUnsignedInt(CRC_OFFSET);
    }

    /** The CRC-32C of bytes 21 to the end of the view. */
    public long computeChecksum() {
        return crc32c(buf, ATTRIBUTES_OFFSET, buf.capacity() - ATTRIBUTES_OFFSET);
    }

    /** The attributes field (16 bits, of which Kafka uses the low byte). */
    public short attributes() {
        return buf.getShort(ATTRIBUTES_OFFSET);
    }

    /**
     * The codec of the records.
     *
     * @throws CorruptRecordException for codec bits 5-7, which no Kafka version writes
     */
    public CompressionType compressionType() {
        int id = attributes() & COMPRESSION_CODEC_MASK;
        if (id > CompressionType.ZSTD.id()) {
            throw new CorruptRecordException("Unknown compression type id: " + id);
        }
        return CompressionType.forId(id);
    }

    public boolean isCompressed() {
        return (attributes() & COMPRESSION_CODEC_MASK) != 0;
    }

    public TimestampType timestampType() {
        return (attributes() & TIMESTAMP_TYPE_MASK) == 0 ? TimestampType.CREATE_TIME : TimestampType.LOG_APPEND_TIME;
    }

    public boolean isTransactional() {
        return (attributes() & TRANSACTIONAL_FLAG_MASK) != 0;
    }

    public boolean isControlBatch() {
        return (attributes() & CONTROL_FLAG_MASK) != 0;
    }

    public boolean hasDeleteHorizonMs() {
        return (attributes() & DELETE_HORIZON_FLAG_MASK) != 0;
    }

    /** The delete horizon the cleaner stored in baseTimestamp, when the attribute bit says there is one. */
    public OptionalLong deleteHorizonMs() {
        return hasDeleteHorizonMs() ? OptionalLong.of(baseTimestamp()) : OptionalLong.empty();
    }

    public int lastOffsetDelta() {
        return buf.getInt(LAST_OFFSET_DELTA_OFFSET);
    }

    public long lastOffset() {
        return baseOffset() + lastOffsetDelta();
    }

    /** The offset after this batch. */
    public long nextOffset() {
        return lastOffset() + 1;
    }

    /** The timestamp records are relative to: the first record's timestamp, or the delete horizon. */
    public long baseTimestamp() {
        return buf.getLong(BASE_TIMESTAMP_OFFSET);
    }

    public long maxTimestamp() {
        return buf.getLong(MAX_TIMESTAMP_OFFSET);
    }

    public long producerId() {
        return buf.getLong(PRODUCER_ID_OFFSET);
    }

    public short producerEpoch() {
        return buf.getShort(PRODUCER_EPOCH_OFFSET);
    }

    public int baseSequence() {
        return buf.getInt(BASE_SEQUENCE_OFFSET);
    }

    /** The sequence of the last record, wrapping at {@link Integer#MAX_VALUE}; {@link #NO_SEQUENCE} if none. */
    public int lastSequence() {
        int baseSequence = baseSequence();
        return baseSequence == NO_SEQUENCE ? NO_SEQUENCE : incrementSequence(baseSequence, lastOffsetDelta());
    }

    public boolean hasProducerId() {
        return producerId() > NO_PRODUCER_ID;
    }

    /** The recordCount field as stored (not checked). */
    public int recordCount() {
        return buf.getInt(RECORDS_COUNT_OFFSET);
    }

    /**
     * Whether the header and CRC are intact: the size is at least the overhead, the declared size is the size of
     * the view, the magic is 2 and the CRC matches. Never throws.
     */
    public boolean isValid() {
        return sizeInBytes() >= RECORD_BATCH_OVERHEAD && sizeInBytes() == buf.capacity() && magic() == MAGIC
                && checksum() == computeChecksum();
    }

    /**
     * Checks {@link #isValid()} and throws Kafka's exceptions when it does not hold.
     *
     * @throws CorruptRecordException for a size below the overhead, a declared size that does not match the bytes
     *                                present (a truncated batch), a magic other than 2, or a CRC mismatch
     */
    public void ensureValid() {
        int size = sizeInBytes();
        if (size < RECORD_BATCH_OVERHEAD) {
            throw new CorruptRecordException("Record batch is corrupt (the size " + size
                    + " is smaller than the minimum allowed overhead " + RECORD_BATCH_OVERHEAD + ")");
        }
        if (size != buf.capacity()) {
            throw new CorruptRecordException("Record batch is corrupt (the declared size " + size
                    + " does not match the " + buf.capacity() + " bytes present)");
        }
        if (magic() != MAGIC) {
            throw new CorruptRecordException("Record batch is corrupt (magic " + magic() + ", expected " + MAGIC
                    + ")");
        }
        long stored = checksum();
        long computed = computeChecksum();
        if (stored != computed) {
            throw new CorruptRecordException("Record is corrupt (stored crc = " + stored + ", computed crc = "
                    + computed + ")");
        }
    }

    /** Sets baseOffset (outside the CRC: no recompute), keeping lastOffsetDelta. */
    public void setBaseOffset(long baseOffset) {
        buf.setLong(BASE_OFFSET_OFFSET, baseOffset);
    }

    /** Sets baseOffset so that the last offset becomes {@code lastOffset}. */
    public void setLastOffset(long lastOffset) {
        setBaseOffset(lastOffset - lastOffsetDelta());
    }

    /** Sets partitionLeaderEpoch (outside the CRC: no recompute). */
    public void setPartitionLeaderEpoch(int epoch) {
        buf.setInt(PARTITION_LEADER_EPOCH_OFFSET, epoch);
    }

    /**
     * Sets the timestamp type and maxTimestamp (for LOG_APPEND_TIME: the append time) and recomputes the CRC, which
     * covers both; the other attribute bits are kept. Does nothing when both already have these values.
     */
    public void setMaxTimestamp(TimestampType timestampType, long maxTimestamp) {
        if (timestampType() == timestampType && maxTimestamp() == maxTimestamp) {
            return;
        }
        int attributes = attributes() & ~TIMESTAMP_TYPE_MASK;
        if (timestampType == TimestampType.LOG_APPEND_TIME) {
            attributes |= TIMESTAMP_TYPE_MASK;
        }
        buf.setShort(ATTRIBUTES_OFFSET, attributes);
        buf.setLong(MAX_TIMESTAMP_OFFSET, maxTimestamp);
        buf.setInt(CRC_OFFSET, (int) computeChecksum());
    }

    /** The records, decoded with the buffer's allocator and {@link #DEFAULT_MAX_UNCOMPRESSED_BYTES}. */
    public List<Record> records() {
        return records(buf.alloc(), DEFAULT_MAX_UNCOMPRESSED_BYTES);
    }

    /**
     * Decodes all records (decompressing into a temporary buffer from {@code allocator}, released before this
     * returns). Does not check the CRC: call {@link #ensureValid()} first for untrusted input.
     *
     * @param maxUncompressedBytes the most bytes the records may decompress to
     * @throws InvalidRecordException for a negative record count, a record count that does not match the records
     *                                present, or a malformed record (Kafka's messages)
     * @throws CorruptRecordException for compressed data that does not decompress, or decompresses to more than
     *                                {@code maxUncompressedBytes}
     */
    public List<Record> records(ByteBufAllocator allocator, int maxUncompressedBytes) {
        int count = recordCount();
        if (count < 0) {
            throw new InvalidRecordException("Found invalid record count " + count + " in magic v" + magic()
                    + " batch");
        }
        if (count == 0) {
            return Collections.emptyList();
        }
        return readRecordBytes(allocator, maxUncompressedBytes, in -> decodeRecords(in, count));
    }

    /**
     * Reads every record's structure and hands its fields to {@code visitor}, without copying keys, values or
     * headers: an uncompressed batch is read in place, a compressed one is decompressed into a temporary buffer from
     * {@code allocator} of at most {@code maxUncompressedBytes}, released before this returns. Checks what
     * {@link #records} checks: the record count, every length and varint, and that the records fill the batch.
     *
     * @return the number of records
     * @throws InvalidRecordException for a negative or wrong record count or a malformed record (Kafka's messages)
     * @throws CorruptRecordException for compressed data that does not decompress, or decompresses to more than
     *                                {@code maxUncompressedBytes}
     */
    public int scanRecords(ByteBufAllocator allocator, int maxUncompressedBytes, RecordVisitor visitor) {
        int count = recordCount();
        if (count < 0) {
            throw new InvalidRecordException("Found invalid record count " + count + " in magic v" + magic()
                    + " batch");
        }
        if (count == 0) {
            return 0;
        }
        long baseTimestamp = baseTimestamp();
        boolean logAppendTime = timestampType() == TimestampType.LOG_APPEND_TIME;
        long maxTimestamp = maxTimestamp();
        return readRecordBytes(allocator, maxUncompressedBytes, in -> {
            for (int i = 0; i < count; i++) {
                if (!in.hasRemaining()) {
                    throw new InvalidRecordException("Incorrect declared batch size, premature EOF reached");
                }
                RecordCodec.scanRecord(in, i, baseTimestamp, logAppendTime, maxTimestamp, visitor);
            }
            if (in.hasRemaining()) {
                throw new InvalidRecordException("Incorrect declared batch size, records still remaining in file");
            }
            return count;
        });
    }

    private List<Record> decodeRecords(ByteBuffer in, int count) {
        boolean logAppendTime = timestampType() == TimestampType.LOG_APPEND_TIME;
        RecordCodec.BatchContext context = new RecordCodec.BatchContext(baseOffset(), baseTimestamp(),
                baseSequence(), logAppendTime, maxTimestamp());
        // Never trust the count for sizing: a bogus count must not allocate more than the bytes could hold.
        List<Record> records = new ArrayList<>(Math.min(count, in.remaining() / RecordCodec.MIN_RECORD_SIZE + 1));
        for (int i = 0; i < count; i++) {
            if (!in.hasRemaining()) {
                throw new InvalidRecordException("Incorrect declared batch size, premature EOF reached");
            }
            records.add(RecordCodec.readRecord(in, context));
        }
        if (in.hasRemaining()) {
            throw new InvalidRecordException("Incorrect declared batch size, records still remaining in file");
        }
        return Collections.unmodifiableList(records);
    }

    /**
     * Hands {@code reader} the batch's records as one {@link ByteBuffer}, which the record codec reads: a view of an
     * uncompressed batch in place (a copy only when the batch spans several buffers), or of the records decompressed
     * into a temporary buffer from {@code allocator} of at most {@code maxUncompressedBytes}, released once
     * {@code reader} returns. Reading records byte by byte through a derived {@link ByteBuf} checks the parent's
     * reference count and dispatches through the wrapper at every byte; a validator that scans every produced record
     * spent about a tenth of the request handlers' CPU there.
     */
    private <T> T readRecordBytes(ByteBufAllocator allocator, int maxUncompressedBytes,
                                  Function<ByteBuffer, T> reader) {
        int length = buf.capacity() - RECORDS_OFFSET;
        CompressionType compression = compressionType();
        if (compression == CompressionType.NONE) {
            return reader.apply(buf.nioBuffer(RECORDS_OFFSET, length));
        }
        ByteBuf data = Compression.decompress(compression, buf.slice(RECORDS_OFFSET, length), allocator,
                maxUncompressedBytes);
        try {
            return reader.apply(data.nioBuffer(data.readerIndex(), data.readableBytes()));
        } finally {
            data.release();
        }
    }

    /** {@code sequence + increment}, wrapping past {@link Integer#MAX_VALUE} to 0 as producer sequences do. */
    public static int incrementSequence(int sequence, int increment) {
        if (sequence > Integer.MAX_VALUE - increment) {
            return increment - (Integer.MAX_VALUE - sequence) - 1;
        }
        return sequence + increment;
    }

    static long crc32c(ByteBuf buffer, int index, int length) {
        CRC32C crc = new CRC32C();
        if (buffer.hasArray()) {
            crc.update(buffer.array(), buffer.arrayOffset() + index, length);
        } else {
            for (ByteBuffer nio : buffer.nioBuffers(index, length)) {
                crc.update(nio);
            }
        }
        return crc.getValue();
    }

    @Override
    public String toString() {
        return "RecordBatch(magic=" + magic() + ", offsets=[" + baseOffset() + ", " + lastOffset() + "], sequence=["
                + baseSequence() + ", " + lastSequence() + "], isTransactional=" + isTransactional()
                + ", isControlBatch=" + isControlBatch() + ", compression=" + (attributes() & COMPRESSION_CODEC_MASK)
                + ", timestampType=" + timestampType() + ", crc=" + checksum() + ", records=" + recordCount() + ")";
    }
}
