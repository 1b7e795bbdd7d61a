package io.cairn.log;

import io.cairn.wire.error.ApiException;

/**
 * A follower append whose first offset overlaps the log or leaves a gap after its end; the replica fetcher truncates
 * or refetches (Kafka's {@code UnexpectedAppendOffsetException}, mapped to {@code UNKNOWN_SERVER_ERROR}). It names
 * the first offset of the first batch and the last offset of the append, which the follower needs to tell a fetch
 * that started inside a batch (the leader's log start moved into it) from a real overlap. Immutable.
 */
public final class UnexpectedAppendOffsetException extends ApiException {

    private static final long serialVersionUID = 1L;

    private final long firstOffset;
    private final long lastOffset;

    public UnexpectedAppendOffsetException(String message, long firstOffset, long lastOffset) {
        super(message);
        this.firstOffset = firstOffset;
        this.lastOffset = lastOffset;
    }

    /** The base offset of the first batch of the append. */
    public long firstOffset() {
        return firstOffset;
    }

    /** The last offset of the append. */
    public long lastOffset() {
        return lastOffset;
    }
}
