package io.cairn.wire.error;

/**
 * Maps to {@code CORRUPT_MESSAGE} (2): see {@link Errors#CORRUPT_MESSAGE} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class CorruptRecordException extends ApiException {

    private static final long serialVersionUID = 1L;

    public CorruptRecordException(String message) {
        super(message);
    }

    public CorruptRecordException(String message, Throwable cause) {
        super(message, cause);
    }
}
