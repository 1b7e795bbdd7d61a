package io.cairn.wire.error;

/**
 * Maps to {@code COORDINATOR_NOT_AVAILABLE} (15): see {@link Errors#COORDINATOR_NOT_AVAILABLE} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class CoordinatorNotAvailableException extends ApiException {

    private static final long serialVersionUID = 1L;

    public CoordinatorNotAvailableException(String message) {
        super(message);
    }

    public CoordinatorNotAvailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
