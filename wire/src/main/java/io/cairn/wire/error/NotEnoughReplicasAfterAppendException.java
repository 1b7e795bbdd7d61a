package io.cairn.wire.error;

/**
 * Maps to {@code NOT_ENOUGH_REPLICAS_AFTER_APPEND} (20):
 * see {@link Errors#NOT_ENOUGH_REPLICAS_AFTER_APPEND} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class NotEnoughReplicasAfterAppendException extends ApiException {

    private static final long serialVersionUID = 1L;

    public NotEnoughReplicasAfterAppendException(String message) {
        super(message);
    }

    public NotEnoughReplicasAfterAppendException(String message, Throwable cause) {
        super(message, cause);
    }
}
