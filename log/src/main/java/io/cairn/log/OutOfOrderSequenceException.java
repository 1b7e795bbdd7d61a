package io.cairn.log;

import io.cairn.wire.error.ApiException;

/**
 * An idempotent batch whose sequence does not follow the producer's last one; Kafka's {@code
 * OUT_OF_ORDER_SEQUENCE_NUMBER} (45).
 * Immutable.
 */
public final class OutOfOrderSequenceException extends ApiException {

    private static final long serialVersionUID = 1L;

    public OutOfOrderSequenceException(String message) {
        super(message);
    }

    public OutOfOrderSequenceException(String message, Throwable cause) {
        super(message, cause);
    }
}
