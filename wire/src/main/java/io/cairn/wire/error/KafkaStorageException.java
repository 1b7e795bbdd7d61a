package io.cairn.wire.error;

/**
 * Maps to {@code KAFKA_STORAGE_ERROR} (56): see {@link Errors#KAFKA_STORAGE_ERROR} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class KafkaStorageException extends ApiException {

    private static final long serialVersionUID = 1L;

    public KafkaStorageException(String message) {
        super(message);
    }

    public KafkaStorageException(String message, Throwable cause) {
        super(message, cause);
    }
}
