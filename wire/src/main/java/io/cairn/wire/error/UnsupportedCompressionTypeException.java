package io.cairn.wire.error;

/**
 * Maps to {@code UNSUPPORTED_COMPRESSION_TYPE} (76): see {@link Errors#UNSUPPORTED_COMPRESSION_TYPE} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class UnsupportedCompressionTypeException extends ApiException {

    private static final long serialVersionUID = 1L;

    public UnsupportedCompressionTypeException(String message) {
        super(message);
    }

    public UnsupportedCompressionTypeException(String message, Throwable cause) {
        super(message, cause);
    }
}
