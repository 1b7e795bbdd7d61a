package io.cairn.wire.error;

/**
 * Maps to {@code INVALID_TOPIC_EXCEPTION} (17): see {@link Errors#INVALID_TOPIC_EXCEPTION} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class InvalidTopicException extends ApiException {

    private static final long serialVersionUID = 1L;

    public InvalidTopicException(String message) {
        super(message);
    }

    public InvalidTopicException(String message, Throwable cause) {
        super(message, cause);
    }
}
