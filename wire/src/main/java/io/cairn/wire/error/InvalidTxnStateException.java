package io.cairn.wire.error;

/**
 * Maps to {@code INVALID_TXN_STATE} (48): see {@link Errors#INVALID_TXN_STATE} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class InvalidTxnStateException extends ApiException {

    private static final long serialVersionUID = 1L;

    public InvalidTxnStateException(String message) {
        super(message);
    }

    public InvalidTxnStateException(String message, Throwable cause) {
        super(message, cause);
    }
}
