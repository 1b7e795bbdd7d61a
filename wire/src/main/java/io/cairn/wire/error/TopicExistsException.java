package io.cairn.wire.error;

/**
 * Maps to {@code TOPIC_ALREADY_EXISTS} (36): see {@link Errors#TOPIC_ALREADY_EXISTS} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class TopicExistsException extends ApiException {

    private static final long serialVersionUID = 1L;

    public TopicExistsException(String message) {
        super(message);
    }

    public TopicExistsException(String message, Throwable cause) {
        super(message, cause);
    }
}
