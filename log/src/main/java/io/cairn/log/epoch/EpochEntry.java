package io.cairn.log.epoch;

/**
 * A leader epoch and the first offset written in it. Immutable.
 *
 * @param epoch       leader epoch
 * @param startOffset first offset of the epoch
 */
public record EpochEntry(int epoch, long startOffset) {
}
