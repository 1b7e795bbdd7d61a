package io.cairn.wire.error;

/**
 * Maps to {@code OUT_OF_ORDER_SEQUENCE_NUMBER} (45): see {@link Errors#OUT_OF_ORDER_SEQUENCE_NUMBER} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class OutOfOrderSequenceException extends ApiException {

    private static final long serialVersionUID = 1L;

    public OutOfOrderSequenceException(String message) {
        super(message);
    }

    public OutOfOrderSequenceException(String message, Throwable cause) {
        super(message, cause);
    }
}
