package io.cairn.wire.error;

/**
 * Maps to {@code UNKNOWN_SERVER_ERROR} (-1): see {@link Errors#UNKNOWN_SERVER_ERROR} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class UnknownServerException extends ApiException {

    private static final long serialVersionUID = 1L;

    public UnknownServerException(String message) {
        super(message);
    }

    public UnknownServerException(String message, Throwable cause) {
        super(message, cause);
    }
}
