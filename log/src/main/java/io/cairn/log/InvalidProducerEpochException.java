package io.cairn.log;

import io.cairn.wire.error.ApiException;

/**
 * A batch from a producer epoch older than the partition has seen; Kafka's {@code INVALID_PRODUCER_EPOCH} (47).
 * Immutable.
 */
public final class InvalidProducerEpochException extends ApiException {

    private static final long serialVersionUID = 1L;

    public InvalidProducerEpochException(String message) {
        super(message);
    }

    public InvalidProducerEpochException(String message, Throwable cause) {
        super(message, cause);
    }
}
