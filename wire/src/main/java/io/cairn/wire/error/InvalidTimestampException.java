package io.cairn.wire.error;

/**
 * Maps to {@code INVALID_TIMESTAMP} (32): see {@link Errors#INVALID_TIMESTAMP} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class InvalidTimestampException extends ApiException {

    private static final long serialVersionUID = 1L;

    public InvalidTimestampException(String message) {
        super(message);
    }

    public InvalidTimestampException(String message, Throwable cause) {
        super(message, cause);
    }
}
