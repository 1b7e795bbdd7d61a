package io.cairn.wire.error;

/**
 * Maps to {@code LEADER_NOT_AVAILABLE} (5): see {@link Errors#LEADER_NOT_AVAILABLE} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class LeaderNotAvailableException extends ApiException {

    private static final long serialVersionUID = 1L;

    public LeaderNotAvailableException(String message) {
        super(message);
    }

    public LeaderNotAvailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
