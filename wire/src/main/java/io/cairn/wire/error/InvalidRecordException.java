package io.cairn.wire.error;

/**
 * Maps to {@code INVALID_RECORD} (87): see {@link Errors#INVALID_RECORD} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class InvalidRecordException extends ApiException {

    private static final long serialVersionUID = 1L;

    public InvalidRecordException(String message) {
        super(message);
    }

    public InvalidRecordException(String message, Throwable cause) {
        super(message, cause);
    }
}
