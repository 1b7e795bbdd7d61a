package io.cairn.broker.coordinator;

import java.nio.ByteBuffer;
import java.util.Optional;

/**
 * The byte format of one coordinator kind's records in its internal topic (Kafka's {@code Serializer} and
 * {@code Deserializer} of the coordinator runtime): a record is a key and a value, a null value is a tombstone.
 *
 * <p>Implementations are stateless and thread-safe: the runtime encodes on the shard threads and decodes on the
 * loader thread.
 *
 * @param <R> the kind's record type
 */
public interface CoordinatorSerde<R> {

    /** The key bytes of {@code record}; throws {@link IllegalArgumentException} when it does not serialize. */
    byte[] keyBytes(R record);

    /** The value bytes of {@code record}, or null for a tombstone. */
    byte[] valueBytes(R record);

    /**
     * Decodes one record; neither buffer's position moves.
     *
     * @return the record, or empty for a record type this kind skips (the loader counts it)
     * @throws MalformedRecordException when the bytes do not decode
     */
    Optional<R> decode(ByteBuffer key, ByteBuffer valueOrNull);

    /** A record whose key or value does not decode; the loader logs and skips it. Immutable. */
    class MalformedRecordException extends IllegalStateException {

        private static final long serialVersionUID = 1L;

        public MalformedRecordException(String message) {
            super(message);
        }

        public MalformedRecordException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
