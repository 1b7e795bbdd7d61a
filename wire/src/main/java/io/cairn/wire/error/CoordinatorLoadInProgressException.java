package io.cairn.wire.error;

/**
 * Maps to {@code COORDINATOR_LOAD_IN_PROGRESS} (14): see {@link Errors#COORDINATOR_LOAD_IN_PROGRESS} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class CoordinatorLoadInProgressException extends ApiException {

    private static final long serialVersionUID = 1L;

    public CoordinatorLoadInProgressException(String message) {
        super(message);
    }

    public CoordinatorLoadInProgressException(String message, Throwable cause) {
        super(message, cause);
    }
}
