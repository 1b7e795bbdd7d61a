package io.cairn.log;

import io.cairn.wire.error.ApiException;

/**
 * The log directory failed an I/O operation; the partition goes offline; Kafka's {@code KAFKA_STORAGE_ERROR} (56).
 * Immutable.
 */
public final class KafkaStorageException extends ApiException {

    private static final long serialVersionUID = 1L;

    public KafkaStorageException(String message) {
        super(message);
    }

    public KafkaStorageException(String message, Throwable cause) {
        super(message, cause);
    }
}
