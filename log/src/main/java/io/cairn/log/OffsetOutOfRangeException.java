package io.cairn.log;

import io.cairn.wire.error.ApiException;

/**
 * A fetch offset below the log start offset or above the log end offset; Kafka's {@code OFFSET_OUT_OF_RANGE} (1).
 * Immutable.
 */
public final class OffsetOutOfRangeException extends ApiException {

    private static final long serialVersionUID = 1L;

    public OffsetOutOfRangeException(String message) {
        super(message);
    }

    public OffsetOutOfRangeException(String message, Throwable cause) {
        super(message, cause);
    }
}
