package io.cairn.wire.error;

/**
 * Maps to {@code UNKNOWN_LEADER_EPOCH} (75): see {@link Errors#UNKNOWN_LEADER_EPOCH} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class UnknownLeaderEpochException extends ApiException {

    private static final long serialVersionUID = 1L;

    public UnknownLeaderEpochException(String message) {
        super(message);
    }

    public UnknownLeaderEpochException(String message, Throwable cause) {
        super(message, cause);
    }
}
