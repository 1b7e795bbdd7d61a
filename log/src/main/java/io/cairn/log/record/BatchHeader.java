package io.cairn.log.record;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * Absolute accessors for the fixed 61-byte header of a Kafka record batch v2, read from any {@link ByteBuffer}
 * without moving its position. Stateless and thread-safe.
 *
 * <p>This is the log's own minimal view, written while the full record-batch view of {@code wire.record} was
 * still in progress; it covers only what storage needs from the header. Layout (big-endian, Kafka's
 * {@code DefaultRecordBatch}):
 * <pre>
 *  0 baseOffset           int64   rewritten by the leader (outside the CRC)
 *  8 batchLength          int32   bytes after this field; whole batch = 12 + batchLength
 * 12 partitionLeaderEpoch int32   rewritten by the leader (outside the CRC)
 * 16 magic                int8    2
 * 17 crc                  uint32  CRC32C of bytes [21, end)
 * 21 attributes           int16   bits 0-2 compression, 3 timestamp type, 4 transactional, 5 control
 * 23 lastOffsetDelta      int32
 * 27 baseTimestamp        int64
 * 35 maxTimestamp         int64
 * 43 producerId           int64
 * 51 producerEpoch        int16
 * 53 baseSequence         int32
 * 57 recordsCount         int32
 * 61 records...
 * </pre>
 */
public final class BatchHeader {

    public static final int BASE_OFFSET = 0;
    public static final int LENGTH = 8;
    public static final int PARTITION_LEADER_EPOCH = 12;
    public static final int MAGIC = 16;
    public static final int CRC = 17;
    public static final int ATTRIBUTES = 21;
    public static final int LAST_OFFSET_DELTA = 23;
    public static final int BASE_TIMESTAMP = 27;
    public static final int MAX_TIMESTAMP = 35;
    public static final int PRODUCER_ID = 43;
    public static final int PRODUCER_EPOCH = 51;
    public static final int BASE_SEQUENCE = 53;
    public static final int RECORDS_COUNT = 57;
    /** Size of the header, and so the smallest valid batch. */
    public static final int SIZE = 61;
    /** baseOffset + batchLength: the part of the header before the length counts. */
    public static final int LOG_OVERHEAD = 12;
    public static final byte MAGIC_V2 = 2;

    public static final int COMPRESSION_MASK = 0x07;
    public static final int TIMESTAMP_TYPE_MASK = 0x08;
    public static final int TRANSACTIONAL_MASK = 0x10;
    public static final int CONTROL_MASK = 0x20;

    public static final long NO_PRODUCER_ID = -1L;
    public static final short NO_PRODUCER_EPOCH = -1;
    public static final int NO_SEQUENCE = -1;
    public static final long NO_TIMESTAMP = -1L;

    private BatchHeader() {
    }

    public static long baseOffset(ByteBuffer buf, int at) {
        return buf.getLong(at + BASE_OFFSET);
    }

    /** The whole size of the batch in bytes, including the 12-byte log overhead. */
    public static int sizeInBytes(ByteBuffer buf, int at) {
        return LOG_OVERHEAD + buf.getInt(at + LENGTH);
    }

    public static int partitionLeaderEpoch(ByteBuffer buf, int at) {
        return buf.getInt(at + PARTITION_LEADER_EPOCH);
    }

    public static byte magic(ByteBuffer buf, int at) {
        return buf.get(at + MAGIC);
    }

    public static long crc(ByteBuffer buf, int at) {
        return Integer.toUnsignedLong(buf.getInt(at + CRC));
    }

    public static short attributes(ByteBuffer buf, int at) {
        return buf.getShort(at + ATTRIBUTES);
    }

    public static int lastOffsetDelta(ByteBuffer buf, int at) {
        return buf.getInt(at + LAST_OFFSET_DELTA);
    }

    public static long lastOffset(ByteBuffer buf, int at) {
        return baseOffset(buf, at) + lastOffsetDelta(buf, at);
    }

    public static long baseTimestamp(ByteBuffer buf, int at) {
        return buf.getLong(at + BASE_TIMESTAMP);
    }

    public static long maxTimestamp(ByteBuffer buf, int at) {
        return buf.getLong(at + MAX_TIMESTAMP);
    }

    public static long producerId(ByteBuffer buf, int at) {
        return buf.getLong(at + PRODUCER_ID);
    }

    public static short producerEpoch(ByteBuffer buf, int at) {
        return buf.getShort(at + PRODUCER_EPOCH);
    }

    public static int baseSequence(ByteBuffer buf, int at) {
        return buf.getInt(at + BASE_SEQUENCE);
    }

    public static int recordsCount(ByteBuffer buf, int at) {
        return buf.getInt(at + RECORDS_COUNT);
    }

    public static int compression(ByteBuffer buf, int at) {
        return attributes(buf, at) & COMPRESSION_MASK;
    }

    public static boolean isLogAppendTime(ByteBuffer buf, int at) {
        return (attributes(buf, at) & TIMESTAMP_TYPE_MASK) != 0;
    }

    public static boolean isTransactional(ByteBuffer buf, int at) {
        return (attributes(buf, at) & TRANSACTIONAL_MASK) != 0;
    }

    public static boolean isControl(ByteBuffer buf, int at) {
        return (attributes(buf, at) & CONTROL_MASK) != 0;
    }

    /** The last sequence number of the batch, wrapping at {@code Integer.MAX_VALUE} like Kafka. */
    public static int lastSequence(ByteBuffer buf, int at) {
        int base = baseSequence(buf, at);
        if (base == NO_SEQUENCE) {
            return NO_SEQUENCE;
        }
        long last = (long) base + lastOffsetDelta(buf, at);
        return (int) (last > Integer.MAX_VALUE ? last - Integer.MAX_VALUE - 1 : last);
    }

    /** CRC32C over the attributes through the end of the batch, as stored in the {@code crc} field. */
    public static long computeCrc(ByteBuffer buf, int at, int size) {
        CRC32C crc = new CRC32C();
        ByteBuffer view = buf.duplicate();
        view.limit(at + size).position(at + ATTRIBUTES);
        crc.update(view);
        return crc.getValue();
    }

    /** Rewrites the fields outside the CRC: the leader does this to assign offsets. */
    public static void setBaseOffsetAndEpoch(ByteBuffer buf, int at, long baseOffset, int partitionLeaderEpoch) {
        buf.putLong(at + BASE_OFFSET, baseOffset);
        buf.putInt(at + PARTITION_LEADER_EPOCH, partitionLeaderEpoch);
    }

    /** Sets LogAppendTime: flips the timestamp-type bit, sets maxTimestamp and recomputes the CRC. */
    public static void setLogAppendTime(ByteBuffer buf, int at, long timestamp) {
        short attributes = (short) (attributes(buf, at) | TIMESTAMP_TYPE_MASK);
        buf.putShort(at + ATTRIBUTES, attributes);
        buf.putLong(at + MAX_TIMESTAMP, timestamp);
        buf.putInt(at + CRC, (int) computeCrc(buf, at, sizeInBytes(buf, at)));
    }
}
