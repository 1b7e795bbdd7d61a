package io.cairn.wire.error;

/**
 * Maps to {@code INVALID_PRODUCER_EPOCH} (47): see {@link Errors#INVALID_PRODUCER_EPOCH} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class InvalidProducerEpochException extends ApiException {

    private static final long serialVersionUID = 1L;

    public InvalidProducerEpochException(String message) {
        super(message);
    }

    public InvalidProducerEpochException(String message, Throwable cause) {
        super(message, cause);
    }
}
