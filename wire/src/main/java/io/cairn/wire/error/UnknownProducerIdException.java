package io.cairn.wire.error;

/**
 * Maps to {@code UNKNOWN_PRODUCER_ID} (59): see {@link Errors#UNKNOWN_PRODUCER_ID} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class UnknownProducerIdException extends ApiException {

    private static final long serialVersionUID = 1L;

    public UnknownProducerIdException(String message) {
        super(message);
    }

    public UnknownProducerIdException(String message, Throwable cause) {
        super(message, cause);
    }
}
