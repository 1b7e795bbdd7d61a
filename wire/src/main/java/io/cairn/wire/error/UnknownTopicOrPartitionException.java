package io.cairn.wire.error;

/**
 * Maps to {@code UNKNOWN_TOPIC_OR_PARTITION} (3): see {@link Errors#UNKNOWN_TOPIC_OR_PARTITION} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class UnknownTopicOrPartitionException extends ApiException {

    private static final long serialVersionUID = 1L;

    public UnknownTopicOrPartitionException(String message) {
        super(message);
    }

    public UnknownTopicOrPartitionException(String message, Throwable cause) {
        super(message, cause);
    }
}
