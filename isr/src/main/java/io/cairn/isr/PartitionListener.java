package io.cairn.isr;

/**
 * Told when a partition's readable data grows, so that waiting fetches (the broker's purgatory) complete at once
 * instead of waiting out {@code max.wait.ms}, and when its leadership changes, so that coordinators load or unload
 * the state kept in it. Called on the appending (or metadata applying) thread; implementations must be quick,
 * thread-safe and must not throw.
 */
@FunctionalInterface
public interface PartitionListener {

    /** The high watermark (and so what consumers may read) of {@code partition} moved forward. */
    void onHighWatermarkAdvanced(Partition partition);

    /**
     * This broker became leader of {@code partition}, stopped leading it, or the partition left this broker (its
     * topic was deleted): a new leader epoch, a new leader, or removal. Listeners read the current state themselves.
     */
    default void onLeadershipChanged(Partition partition) {
    }
}
