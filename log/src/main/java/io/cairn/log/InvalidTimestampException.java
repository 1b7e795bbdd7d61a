package io.cairn.log;

import io.cairn.wire.error.ApiException;

/**
 * A batch timestamp outside {@code message.timestamp.before.max.ms}/{@code after.max.ms} of the broker clock;
 * Kafka's {@code INVALID_TIMESTAMP} (32). Immutable.
 */
public final class InvalidTimestampException extends ApiException {

    private static final long serialVersionUID = 1L;

    public InvalidTimestampException(String message) {
        super(message);
    }
}
