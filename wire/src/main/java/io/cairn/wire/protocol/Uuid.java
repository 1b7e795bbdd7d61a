package io.cairn.wire.protocol;

import java.nio.ByteBuffer;
import java.util.Base64;

/**
 * A 128-bit UUID as Kafka puts it on the wire (two big-endian longs) and prints it (URL-safe base64, no padding).
 *
 * <p>Immutable and thread-safe. {@link #ZERO} is Kafka's "no id" sentinel.
 */
public record Uuid(long mostSignificantBits, long leastSignificantBits) {

    /** The all-zero id Kafka uses for "unset". */
    public static final Uuid ZERO = new Uuid(0L, 0L);

    /** Kafka's metadata topic id ({@code Uuid.METADATA_TOPIC_ID}), printed {@code AAAAAAAAAAAAAAAAAAAAAQ}. */
    public static final Uuid ONE = new Uuid(0L, 1L);

    /** Parses Kafka's 22-character URL-safe base64 form. */
    public static Uuid fromString(String text) {
        byte[] bytes = Base64.getUrlDecoder().decode(text);
        if (bytes.length != 16) {
            throw new IllegalArgumentException("A Uuid is 16 bytes, got " + bytes.length + " from '" + text + "'");
        }
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        return new Uuid(buffer.getLong(), buffer.getLong());
    }

    @Override
    public String toString() {
        ByteBuffer buffer = ByteBuffer.allocate(16);
        buffer.putLong(mostSignificantBits).putLong(leastSignificantBits);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(buffer.array());
    }
}
