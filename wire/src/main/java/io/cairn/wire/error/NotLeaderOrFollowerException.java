package io.cairn.wire.error;

/**
 * Maps to {@code NOT_LEADER_OR_FOLLOWER} (6): see {@link Errors#NOT_LEADER_OR_FOLLOWER} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class NotLeaderOrFollowerException extends ApiException {

    private static final long serialVersionUID = 1L;

    public NotLeaderOrFollowerException(String message) {
        super(message);
    }

    public NotLeaderOrFollowerException(String message, Throwable cause) {
        super(message, cause);
    }
}
