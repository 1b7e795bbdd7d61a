package io.cairn.wire.error;

/**
 * Maps to {@code PRODUCER_FENCED} (90): see {@link Errors#PRODUCER_FENCED} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class ProducerFencedException extends ApiException {

    private static final long serialVersionUID = 1L;

    public ProducerFencedException(String message) {
        super(message);
    }

    public ProducerFencedException(String message, Throwable cause) {
        super(message, cause);
    }
}
