package io.cairn.wire.record;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;

/**
 * One record header: a non-null UTF-8 key and a nullable byte value. Thread-safe: immutable (the value is copied in
 * and handed out as a copy or a read-only view).
 */
public final class Header {

    private final String key;
    private final byte[] value;

    /**
     * @param key   the header key, never {@code null}
     * @param value the header value, or {@code null}; copied
     */
    public Header(String key, byte[] value) {
        this.key = Objects.requireNonNull(key, "Invalid null header key found in headers");
        this.value = value == null ? null : value.clone();
    }

    /** Takes ownership of {@code value} without copying: for the decoder, which made the array itself. */
    static Header owning(String key, byte[] value) {
        return new Header(key, value, true);
    }

    private Header(String key, byte[] value, boolean owned) {
        this.key = key;
        this.value = value;
    }

    public String key() {
        return key;
    }

    /** A copy of the value, or {@code null}. */
    public byte[] value() {
        return value == null ? null : value.clone();
    }

    /** A read-only view of the value, or {@code null}. */
    public ByteBuffer valueBuffer() {
        return value == null ? null : ByteBuffer.wrap(value).asReadOnlyBuffer();
    }

    /** The value length, or -1 when the value is {@code null}. */
    public int valueSize() {
        return value == null ? -1 : value.length;
    }

    byte[] valueArray() {
        return value;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof Header)) {
            return false;
        }
        Header other = (Header) o;
        return key.equals(other.key) && Arrays.equals(value, other.value);
    }

    @Override
    public int hashCode() {
        return 31 * key.hashCode() + Arrays.hashCode(value);
    }

    @Override
    public String toString() {
        return "Header(key=" + key + ", value=" + (value == null ? "null" : value.length + " bytes") + ")";
    }
}
