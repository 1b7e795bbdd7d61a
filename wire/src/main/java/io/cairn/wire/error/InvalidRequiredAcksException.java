package io.cairn.wire.error;

/**
 * Maps to {@code INVALID_REQUIRED_ACKS} (21): see {@link Errors#INVALID_REQUIRED_ACKS} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class InvalidRequiredAcksException extends ApiException {

    private static final long serialVersionUID = 1L;

    public InvalidRequiredAcksException(String message) {
        super(message);
    }

    public InvalidRequiredAcksException(String message, Throwable cause) {
        super(message, cause);
    }
}
