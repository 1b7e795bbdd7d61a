package io.cairn.wire.error;

/**
 * Maps to {@code INVALID_REQUEST} (42): see {@link Errors#INVALID_REQUEST} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class InvalidRequestException extends ApiException {

    private static final long serialVersionUID = 1L;

    public InvalidRequestException(String message) {
        super(message);
    }

    public InvalidRequestException(String message, Throwable cause) {
        super(message, cause);
    }
}
