package io.cairn.wire.error;

/**
 * Maps to {@code INVALID_CONFIG} (40): see {@link Errors#INVALID_CONFIG} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class InvalidConfigurationException extends ApiException {

    private static final long serialVersionUID = 1L;

    public InvalidConfigurationException(String message) {
        super(message);
    }

    public InvalidConfigurationException(String message, Throwable cause) {
        super(message, cause);
    }
}
