package io.cairn.wire.error;

/**
 * Maps to {@code OFFSET_OUT_OF_RANGE} (1): see {@link Errors#OFFSET_OUT_OF_RANGE} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class OffsetOutOfRangeException extends ApiException {

    private static final long serialVersionUID = 1L;

    public OffsetOutOfRangeException(String message) {
        super(message);
    }

    public OffsetOutOfRangeException(String message, Throwable cause) {
        super(message, cause);
    }
}
