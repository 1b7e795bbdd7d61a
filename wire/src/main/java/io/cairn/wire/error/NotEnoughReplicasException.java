package io.cairn.wire.error;

/**
 * Maps to {@code NOT_ENOUGH_REPLICAS} (19): see {@link Errors#NOT_ENOUGH_REPLICAS} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class NotEnoughReplicasException extends ApiException {

    private static final long serialVersionUID = 1L;

    public NotEnoughReplicasException(String message) {
        super(message);
    }

    public NotEnoughReplicasException(String message, Throwable cause) {
        super(message, cause);
    }
}
