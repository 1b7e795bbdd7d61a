package io.cairn.wire.error;

/**
 * Maps to {@code RECORD_LIST_TOO_LARGE} (18): see {@link Errors#RECORD_LIST_TOO_LARGE} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class RecordBatchTooLargeException extends ApiException {

    private static final long serialVersionUID = 1L;

    public RecordBatchTooLargeException(String message) {
        super(message);
    }

    public RecordBatchTooLargeException(String message, Throwable cause) {
        super(message, cause);
    }
}
