package io.cairn.wire.error;

/**
 * Maps to {@code DUPLICATE_SEQUENCE_NUMBER} (46): see {@link Errors#DUPLICATE_SEQUENCE_NUMBER} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class DuplicateSequenceException extends ApiException {

    private static final long serialVersionUID = 1L;

    public DuplicateSequenceException(String message) {
        super(message);
    }

    public DuplicateSequenceException(String message, Throwable cause) {
        super(message, cause);
    }
}
