package io.cairn.isr;

/**
 * An OffsetForLeaderEpoch answer: the largest epoch at most the one asked for, and the offset where it ends
 * ({@link #UNDEFINED_EPOCH} / {@link #UNDEFINED_EPOCH_OFFSET} when the log knows no such epoch). Immutable.
 *
 * @param leaderEpoch the epoch found
 * @param endOffset   the first offset after that epoch (the log end offset for the latest epoch)
 */
public record EpochEndOffset(int leaderEpoch, long endOffset) {

    public static final int UNDEFINED_EPOCH = -1;
    public static final long UNDEFINED_EPOCH_OFFSET = -1L;
}
