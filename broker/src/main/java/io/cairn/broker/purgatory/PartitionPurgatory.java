package io.cairn.broker.purgatory;

import io.cairn.isr.Partition;
import io.cairn.isr.PartitionListener;
import io.cairn.isr.ReplicaManager;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The broker's one purgatory for operations that wait on partitions (Kafka's {@code ReplicaManager} purgatories):
 * delayed fetches, acks=all produce, coordinator writes and DeleteRecords watch the partitions they read or wrote,
 * and the partition events that can complete them retry exactly those operations:
 * <ul>
 *   <li>log end offset advanced: operations that read up to the log end (follower fetches);</li>
 *   <li>high watermark advanced: operations that wait for the high watermark (consumer fetches, acks=all);</li>
 *   <li>a follower reported a new log start offset: DeleteRecords waiting for the low watermark;</li>
 *   <li>ISR changed, leadership changed or the partition left this broker: every operation on the partition.</li>
 * </ul>
 * Each operation also expires on the injected {@link Timer}; a completed operation leaves the purgatory at once.
 *
 * <p>Lifecycle: created with the replica manager (it subscribes itself to its partition events), closed after the
 * listeners stopped and before the partitions close; closing answers every waiting operation. Thread-safety:
 * thread-safe.
 */
public final class PartitionPurgatory implements PartitionListener, AutoCloseable {

    /** Which offset of a partition an operation waits for. */
    public enum WakeOn {
        /** The leader's log end offset: follower fetches. */
        LOG_END_OFFSET,
        /** The high watermark (the last stable offset moves with it): consumers, acks=all, coordinator writes. */
        HIGH_WATERMARK,
        /** The low watermark (the replicas' smallest log start offset): DeleteRecords. */
        LOW_WATERMARK
    }

    /** What an operation watches: a partition and the offset of it whose moves can complete the operation. */
    record Key(TopicPartition topicPartition, WakeOn wakeOn) {
    }

    private final DelayedOperationPurgatory<Key> purgatory;

    /** A purgatory on the wall clock. */
    public PartitionPurgatory(ReplicaManager replicas) {
        this(replicas, new SystemTimer("purgatory"));
    }

    /** A purgatory expiring operations on {@code timer}, which it owns. */
    public PartitionPurgatory(ReplicaManager replicas, Timer timer) {
        this.purgatory = new DelayedOperationPurgatory<>("partition", timer);
        replicas.addListener(this);
    }

    /**
     * Completes {@code operation} now if it can, else watches it under {@code partitions} for the events of
     * {@code wakeOn} (and the ISR and leadership events) until one completes it or its delay runs out. Returns true
     * when it completed during this call.
     */
    public boolean tryCompleteElseWatch(DelayedOperation operation, Collection<TopicPartition> partitions,
                                        WakeOn wakeOn) {
        List<Key> keys = new ArrayList<>(partitions.size());
        for (TopicPartition tp : partitions) {
            keys.add(new Key(tp, wakeOn));
        }
        return purgatory.tryCompleteElseWatch(operation, keys);
    }

    /**
     * Completes when the high watermark of {@code partition} reaches {@code requiredOffset} (Kafka's coordinator
     * write with acks=all): with NONE or NOT_ENOUGH_REPLICAS_AFTER_APPEND when it did, NOT_LEADER_OR_FOLLOWER when
     * the leadership was lost first, REQUEST_TIMED_OUT after {@code timeoutMs}.
     */
    public CompletableFuture<Errors> awaitHighWatermark(Partition partition, long requiredOffset, long timeoutMs) {
        DelayedHighWatermark wait = new DelayedHighWatermark(partition, requiredOffset, timeoutMs);
        tryCompleteElseWatch(wait, List.of(partition.topicPartition()), WakeOn.HIGH_WATERMARK);
        return wait.result;
    }

    /**
     * Retries the operations that wait on the high watermark of {@code topicPartition} although it did not move:
     * share fetches, whose records also become available when another consumer releases them or their locks expire.
     */
    public void checkHighWatermarkWatchers(TopicPartition topicPartition) {
        purgatory.checkAndComplete(new Key(topicPartition, WakeOn.HIGH_WATERMARK));
    }

    @Override
    public void onHighWatermarkAdvanced(Partition partition) {
        purgatory.checkAndComplete(new Key(partition.topicPartition(), WakeOn.HIGH_WATERMARK));
    }

    @Override
    public void onLogEndOffsetAdvanced(Partition partition) {
        purgatory.checkAndComplete(new Key(partition.topicPartition(), WakeOn.LOG_END_OFFSET));
    }

    @Override
    public void onLogStartOffsetChanged(Partition partition) {
        purgatory.checkAndComplete(new Key(partition.topicPartition(), WakeOn.LOW_WATERMARK));
    }

    @Override
    public void onIsrChanged(Partition partition) {
        checkAll(partition);
    }

    @Override
    public void onLeadershipChanged(Partition partition) {
        checkAll(partition);
    }

    private void checkAll(Partition partition) {
        for (WakeOn wakeOn : WakeOn.values()) {
            purgatory.checkAndComplete(new Key(partition.topicPartition(), wakeOn));
        }
    }

    /** Operations waiting; for tests and metrics. */
    public int pendingCount() {
        return purgatory.pendingCount();
    }

    /** Watch keys (partition and offset kind) with at least one waiting operation; for tests and metrics. */
    public int watchedKeyCount() {
        return purgatory.watchedKeyCount();
    }

    /** Answers every waiting operation (as expired) and stops the timer. */
    @Override
    public void close() {
        purgatory.close();
    }

    /** A wait for one partition's high watermark; see {@link #awaitHighWatermark}. */
    private static final class DelayedHighWatermark extends DelayedOperation {

        private final Partition partition;
        private final long requiredOffset;
        private final CompletableFuture<Errors> result = new CompletableFuture<>();
        /** Written under the operation's lock before completion, read by {@link #onComplete}. */
        private Errors outcome = Errors.REQUEST_TIMED_OUT;

        DelayedHighWatermark(Partition partition, long requiredOffset, long timeoutMs) {
            super(timeoutMs);
            this.partition = partition;
            this.requiredOffset = requiredOffset;
        }

        @Override
        protected boolean tryComplete() {
            Optional<Errors> reached = partition.checkEnoughReplicasReachOffset(requiredOffset);
            if (reached.isEmpty()) {
                return false;
            }
            outcome = reached.get();
            return forceComplete();
        }

        @Override
        protected void onComplete() {
            result.complete(outcome);
        }

        @Override
        protected void onExpiration() {
            // The outcome stayed REQUEST_TIMED_OUT.
        }
    }
}
