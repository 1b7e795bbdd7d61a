package io.cairn.wire.error;

/**
 * Maps to {@code UNSUPPORTED_FOR_MESSAGE_FORMAT} (43):
 * see {@link Errors#UNSUPPORTED_FOR_MESSAGE_FORMAT} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class UnsupportedForMessageFormatException extends ApiException {

    private static final long serialVersionUID = 1L;

    public UnsupportedForMessageFormatException(String message) {
        super(message);
    }

    public UnsupportedForMessageFormatException(String message, Throwable cause) {
        super(message, cause);
    }
}
