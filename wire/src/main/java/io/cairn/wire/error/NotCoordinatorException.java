package io.cairn.wire.error;

/**
 * Maps to {@code NOT_COORDINATOR} (16): see {@link Errors#NOT_COORDINATOR} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class NotCoordinatorException extends ApiException {

    private static final long serialVersionUID = 1L;

    public NotCoordinatorException(String message) {
        super(message);
    }

    public NotCoordinatorException(String message, Throwable cause) {
        super(message, cause);
    }
}
