package io.cairn.wire.record;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * One record read from (or to be written into) a v2 batch, as an immutable value: absolute offset, timestamp,
 * producer sequence, nullable key and value, headers. Key and value are copied out of the batch by the decoder and
 * exposed as copies or read-only views, so a {@code Record} never pins a (pooled) buffer.
 *
 * <p>Thread-safe: immutable.
 */
public final class Record {

    /** Sequence of a record in a batch without a producer sequence ({@link RecordBatch#NO_SEQUENCE}). */
    public static final int NO_SEQUENCE = -1;

    private final long offset;
    private final long timestamp;
    private final int sequence;
    private final byte[] key;
    private final byte[] value;
    private final List<Header> headers;

    /**
     * @param offset    the absolute offset
     * @param timestamp the timestamp in milliseconds (for LOG_APPEND_TIME batches, the batch's append time)
     * @param sequence  the producer sequence of this record, or {@link #NO_SEQUENCE}
     * @param key       the key or {@code null}; copied
     * @param value     the value or {@code null}; copied
     * @param headers   the headers, never {@code null}; copied
     */
    public Record(long offset, long timestamp, int sequence, byte[] key, byte[] value, List<Header> headers) {
        this(offset, timestamp, sequence, key == null ? null : key.clone(), value == null ? null : value.clone(),
                List.copyOf(Objects.requireNonNull(headers, "Headers cannot be null")), true);
    }

    private Record(long offset, long timestamp, int sequence, byte[] key, byte[] value, List<Header> headers,
                   boolean owned) {
        this.offset = offset;
        this.timestamp = timestamp;
        this.sequence = sequence;
        this.key = key;
        this.value = value;
        this.headers = headers;
    }

    /** Takes ownership of the arrays and the (unmodifiable) list: for the decoder, which made them itself. */
    static Record owning(long offset, long timestamp, int sequence, byte[] key, byte[] value, List<Header> headers) {
        return new Record(offset, timestamp, sequence, key, value, headers, true);
    }

    public long offset() {
        return offset;
    }

    public long timestamp() {
        return timestamp;
    }

    public int sequence() {
        return sequence;
    }

    public boolean hasKey() {
        return key != null;
    }

    public boolean hasValue() {
        return value != null;
    }

    /** A copy of the key, or {@code null}. */
    public byte[] key() {
        return key == null ? null : key.clone();
    }

    /** A copy of the value, or {@code null}. */
    public byte[] value() {
        return value == null ? null : value.clone();
    }

    /** A read-only view of the key, or {@code null}. */
    public ByteBuffer keyBuffer() {
        return key == null ? null : ByteBuffer.wrap(key).asReadOnlyBuffer();
    }

    /** A read-only view of the value, or {@code null}. */
    public ByteBuffer valueBuffer() {
        return value == null ? null : ByteBuffer.wrap(value).asReadOnlyBuffer();
    }

    /** The key length, or -1 for a {@code null} key. */
    public int keySize() {
        return key == null ? -1 : key.length;
    }

    /** The value length, or -1 for a {@code null} value. */
    public int valueSize() {
        return value == null ? -1 : value.length;
    }

    /** The headers, unmodifiable. */
    public List<Header> headers() {
        return headers;
    }

    byte[] keyArray() {
        return key;
    }

    byte[] valueArray() {
        return value;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof Record)) {
            return false;
        }
        Record other = (Record) o;
        return offset == other.offset && timestamp == other.timestamp && sequence == other.sequence
                && Arrays.equals(key, other.key) && Arrays.equals(value, other.value)
                && headers.equals(other.headers);
    }

    @Override
    public int hashCode() {
        int result = Long.hashCode(offset);
        result = 31 * result + Long.hashCode(timestamp);
        result = 31 * result + sequence;
        result = 31 * result + Arrays.hashCode(key);
        result = 31 * result + Arrays.hashCode(value);
        return 31 * result + headers.hashCode();
    }

    @Override
    public String toString() {
        return "Record(offset=" + offset + ", timestamp=" + timestamp + ", key=" + sizeText(key) + ", value="
                + sizeText(value) + ", headers=" + headers.size() + ")";
    }

    private static String sizeText(byte[] bytes) {
        return bytes == null ? "null" : bytes.length + " bytes";
    }
}
