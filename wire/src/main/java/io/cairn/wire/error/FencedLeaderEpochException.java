package io.cairn.wire.error;

/**
 * Maps to {@code FENCED_LEADER_EPOCH} (74): see {@link Errors#FENCED_LEADER_EPOCH} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class FencedLeaderEpochException extends ApiException {

    private static final long serialVersionUID = 1L;

    public FencedLeaderEpochException(String message) {
        super(message);
    }

    public FencedLeaderEpochException(String message, Throwable cause) {
        super(message, cause);
    }
}
