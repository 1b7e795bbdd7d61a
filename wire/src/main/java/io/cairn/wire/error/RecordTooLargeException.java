package io.cairn.wire.error;

/**
 * Maps to {@code MESSAGE_TOO_LARGE} (10): see {@link Errors#MESSAGE_TOO_LARGE} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class RecordTooLargeException extends ApiException {

    private static final long serialVersionUID = 1L;

    public RecordTooLargeException(String message) {
        super(message);
    }

    public RecordTooLargeException(String message, Throwable cause) {
        super(message, cause);
    }
}
