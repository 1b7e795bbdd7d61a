package io.cairn.isr;

/**
 * Told when a partition's readable data grows, so that waiting fetches (the broker's purgatory) complete at once
 * instead of waiting out {@code max.wait.ms}. Called on the appending thread after the append; implementations
 * must be quick, thread-safe and must not throw.
 */
@FunctionalInterface
public interface PartitionListener {

    /** The high watermark (and so what consumers may read) of {@code partition} moved forward. */
    void onHighWatermarkAdvanced(Partition partition);
}
