package io.cairn.log.record;

import java.nio.ByteBuffer;

/**
 * One record of a v2 batch as the log sees it: absolute offset and timestamp, key and value as read-only views
 * ({@code null} when absent). Immutable; the buffers share memory with the batch they came from.
 *
 * @param offset    absolute offset (batch base offset + offset delta)
 * @param timestamp absolute timestamp (batch base timestamp + delta, or the batch max timestamp for LogAppendTime)
 * @param key       the key, or {@code null}
 * @param value     the value, or {@code null} (a tombstone when the key is set)
 * @param headerCount number of headers
 */
public record LogRecord(long offset, long timestamp, ByteBuffer key, ByteBuffer value, int headerCount) {

    /** The key as a fresh byte array, or {@code null}. */
    public byte[] keyBytes() {
        return bytes(key);
    }

    /** The value as a fresh byte array, or {@code null}. */
    public byte[] valueBytes() {
        return bytes(value);
    }

    private static byte[] bytes(ByteBuffer buf) {
        if (buf == null) {
            return null;
        }
        byte[] out = new byte[buf.remaining()];
        buf.duplicate().get(out);
        return out;
    }
}
