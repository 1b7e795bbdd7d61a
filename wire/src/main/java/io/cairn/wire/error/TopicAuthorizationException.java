package io.cairn.wire.error;

/**
 * Maps to {@code TOPIC_AUTHORIZATION_FAILED} (29): see {@link Errors#TOPIC_AUTHORIZATION_FAILED} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class TopicAuthorizationException extends ApiException {

    private static final long serialVersionUID = 1L;

    public TopicAuthorizationException(String message) {
        super(message);
    }

    public TopicAuthorizationException(String message, Throwable cause) {
        super(message, cause);
    }
}
