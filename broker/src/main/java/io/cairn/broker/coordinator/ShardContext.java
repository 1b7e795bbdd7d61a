package io.cairn.broker.coordinator;

import io.cairn.log.producer.VerificationGuard;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * What the state machines of one coordinator shard (one partition of a coordinator kind's internal topic, led by this
 * broker) may do besides changing their own state: write records to the shard's partition and run timers.
 *
 * <p>Thread-safety: every shard method, every timer task and every completion of a write runs on a coordinator
 * thread, one at a time per shard, so state machines need no locks. Calls from any other thread are a bug.
 *
 * @param <R> the record type of the coordinator kind
 */
public interface ShardContext<R> {

    /** The partition of the internal topic this shard owns. */
    int partitionIndex();

    /**
     * The partition's leader epoch when this shard was loaded: the coordinator epoch (a transaction coordinator
     * stamps its markers with it).
     */
    int leaderEpoch();

    /** Now, in milliseconds since the epoch (the coordinator's clock, so tests can move it). */
    long nowMs();

    /**
     * Appends {@code records} to the shard's partition and completes, on the shard's thread, once they are committed
     * (the high watermark passed them). Records written by several operations while an append is pending go into one
     * batch (see {@link CoordinatorRuntime}); one operation's records always stay together in one batch. It fails
     * with the Kafka exception a client should see: {@code NotCoordinatorException} when this broker no longer leads
     * the partition, {@code CoordinatorNotAvailableException} when the append could not be made durable,
     * {@code RecordTooLargeException} when the records exceed the partition's {@code max.message.bytes}. The caller
     * applies what it wrote to its state itself when the write completes; records are replayed only when a shard is
     * loaded.
     */
    default CompletableFuture<Void> write(List<R> records) {
        return write(records, -1L, (short) -1).thenApply(offset -> null);
    }

    /**
     * {@link #write(List)} for an operation that needs the offsets of its records, or whose records belong to a
     * transaction: with {@code producerId} ≥ 0 they are appended at once as a transactional batch of that producer
     * (never accumulated with other operations' records), and stay pending until
     * {@link CoordinatorRuntime#completeTransaction} writes the producer's marker.
     *
     * @return the offset of the first record (the others follow it in order)
     */
    default CompletableFuture<Long> write(List<R> records, long producerId, short producerEpoch) {
        return write(records, producerId, producerEpoch, null);
    }

    /**
     * {@link #write(List, long, short)} of a transactional batch the transaction coordinator verified (KIP-890,
     * {@link CoordinatorRuntime#startTransactionVerification}): the append carries {@code verification}, so it fails
     * with {@code InvalidTxnStateException} when the producer's transaction is not ongoing in the partition and the
     * guard is no longer the partition's (a marker ended the transaction meanwhile). Null asks for no check.
     */
    CompletableFuture<Long> write(List<R> records, long producerId, short producerEpoch,
                                  VerificationGuard verification);

    /**
     * Runs {@code task} on the shard's thread after {@code delayMs}, replacing any pending timer with the same
     * {@code key}. Timers die with the shard (leadership lost, broker stopping).
     */
    void schedule(String key, long delayMs, Runnable task);

    /** Cancels the pending timer with this key, if any. */
    void cancel(String key);

    /**
     * Runs {@code task} on the shard's thread, after the tasks queued before it: how work another module completes
     * (a producer id, markers sent over the network) comes back to the state machine. Unlike timers, the task also
     * runs after the shard is closed (it must check that itself), unless the runtime has stopped.
     */
    void execute(Runnable task);
}
