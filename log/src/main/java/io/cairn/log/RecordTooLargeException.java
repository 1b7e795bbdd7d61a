package io.cairn.log;

import io.cairn.wire.error.ApiException;

/**
 * A batch is larger than {@code max.message.bytes}; Kafka's {@code MESSAGE_TOO_LARGE} (10).
 * Immutable.
 */
public final class RecordTooLargeException extends ApiException {

    private static final long serialVersionUID = 1L;

    public RecordTooLargeException(String message) {
        super(message);
    }

    public RecordTooLargeException(String message, Throwable cause) {
        super(message, cause);
    }
}
