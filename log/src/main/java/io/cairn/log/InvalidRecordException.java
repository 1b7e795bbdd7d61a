package io.cairn.log;

import io.cairn.wire.error.ApiException;

/**
 * A batch breaks a rule of the format or of the topic (bad offsets, count, magic, control batch from a client);
 * Kafka's {@code INVALID_RECORD} (87).
 * Immutable.
 */
public final class InvalidRecordException extends ApiException {

    private static final long serialVersionUID = 1L;

    public InvalidRecordException(String message) {
        super(message);
    }

    public InvalidRecordException(String message, Throwable cause) {
        super(message, cause);
    }
}
