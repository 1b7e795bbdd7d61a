package io.cairn.broker.group;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * What the state machines of one coordinator shard (one {@code __consumer_offsets} partition led by this broker) may
 * do besides changing their own state: write records to the shard's partition and run timers.
 *
 * <p>Thread-safety: every shard method, every timer task and every completion of {@link #write} runs on the one
 * coordinator thread, so state machines need no locks. Calls from any other thread are a bug.
 */
public interface ShardContext {

    /** The {@code __consumer_offsets} partition this shard owns. */
    int partitionIndex();

    /** Now, in milliseconds since the epoch (the coordinator's clock, so tests can move it). */
    long nowMs();

    /**
     * Appends {@code records} to the shard's partition as one batch and completes, on the coordinator thread, once
     * they are committed (the high watermark passed them). It fails with the Kafka exception a client should see:
     * {@code NotCoordinatorException} when this broker no longer leads the partition, {@code
     * CoordinatorNotAvailableException} when the append could not be made durable, {@code RecordTooLargeException}
     * ... The caller applies what it wrote to its state itself when the write completes; records are replayed only
     * when a shard is loaded.
     */
    CompletableFuture<Void> write(List<CoordinatorRecord> records);

    /**
     * Runs {@code task} on the coordinator thread after {@code delayMs}, replacing any pending timer with the same
     * {@code key}. Timers die with the shard (leadership lost, broker stopping).
     */
    void schedule(String key, long delayMs, Runnable task);

    /** Cancels the pending timer with this key, if any. */
    void cancel(String key);
}
