package io.cairn.wire.error;

/**
 * Maps to {@code UNKNOWN_TOPIC_ID} (100): see {@link Errors#UNKNOWN_TOPIC_ID} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class UnknownTopicIdException extends ApiException {

    private static final long serialVersionUID = 1L;

    public UnknownTopicIdException(String message) {
        super(message);
    }

    public UnknownTopicIdException(String message, Throwable cause) {
        super(message, cause);
    }
}
