package io.cairn.log;

import io.cairn.wire.error.ApiException;

/**
 * A batch failed its CRC32C or size checks; Kafka's {@code CORRUPT_MESSAGE} (2).
 * Immutable.
 */
public final class CorruptRecordException extends ApiException {

    private static final long serialVersionUID = 1L;

    public CorruptRecordException(String message) {
        super(message);
    }

    public CorruptRecordException(String message, Throwable cause) {
        super(message, cause);
    }
}
