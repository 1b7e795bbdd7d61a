package io.cairn.log;

import io.cairn.wire.error.ApiException;

/**
 * A follower append whose first offset overlaps the log or leaves a gap after its end; the replica fetcher truncates
 * or refetches (Kafka's {@code UnexpectedAppendOffsetException}, mapped to {@code UNKNOWN_SERVER_ERROR}).
 * Immutable.
 */
public final class UnexpectedAppendOffsetException extends ApiException {

    private static final long serialVersionUID = 1L;

    public UnexpectedAppendOffsetException(String message) {
        super(message);
    }

    public UnexpectedAppendOffsetException(String message, Throwable cause) {
        super(message, cause);
    }
}
