package io.cairn.isr;

/**
 * Told when something a delayed operation waits for changes on a partition: its log end offset grew (follower
 * fetches), its high watermark grew (consumer fetches, acks=all produce, coordinator writes), its ISR changed, or
 * its leadership changed (a new leader epoch, a new leader, or the partition left this broker). The broker's
 * purgatory retries the operations watching the partition; coordinators load or unload the state kept in it.
 * Called on the appending (or metadata applying, or follower fetching) thread; implementations must be quick,
 * thread-safe and must not throw.
 */
@FunctionalInterface
public interface PartitionListener {

    /** The high watermark (and so what consumers may read) of {@code partition} moved forward. */
    void onHighWatermarkAdvanced(Partition partition);

    /** The leader's log end offset of {@code partition} moved forward (what followers may read). */
    default void onLogEndOffsetAdvanced(Partition partition) {
    }

    /**
     * A follower's fetch reported a new log start offset of its replica of {@code partition}, led here: the low
     * watermark a DeleteRecords waits for may have moved.
     */
    default void onLogStartOffsetChanged(Partition partition) {
    }

    /** The in-sync replica set of {@code partition} changed while its leadership stayed. */
    default void onIsrChanged(Partition partition) {
    }

    /**
     * This broker became leader of {@code partition}, stopped leading it, or the partition left this broker (its
     * topic was deleted): a new leader epoch, a new leader, or removal. Listeners read the current state themselves.
     */
    default void onLeadershipChanged(Partition partition) {
    }
}
