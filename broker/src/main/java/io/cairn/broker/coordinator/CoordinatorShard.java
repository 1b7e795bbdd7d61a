package io.cairn.broker.coordinator;

/**
 * The state machine of one partition of a coordinator kind's internal topic, as the runtime drives it (Kafka's
 * {@code CoordinatorShard}): created when this broker becomes the partition's leader, fed the partition's log by
 * {@link #replay} and {@link #replayEndTransactionMarker} while loading, started by {@link #onLoaded}, and stopped
 * by {@link #onUnloaded} when the leadership ends. While active it changes its state through its
 * {@link ShardContext}: it writes records and applies them to itself once they are committed.
 *
 * <p>Thread-safety: the runtime calls a shard from one thread at a time (the loader thread while loading, then one
 * coordinator thread at a time), with a happens-before edge between calls, so implementations need no locks.
 *
 * @param <R> the kind's record type
 */
public interface CoordinatorShard<R> {

    /**
     * Loading: applies one record of the log.
     *
     * @param offset        the record's offset
     * @param producerId    the producer of the record's batch when the batch is transactional, else -1: its record
     *                      stays pending until a marker of that producer commits or aborts it
     * @param producerEpoch that producer's epoch, or -1
     */
    void replay(long offset, long producerId, short producerEpoch, R record);

    /** Loading: a transaction marker (COMMIT or ABORT) of {@code producerId} ends its pending records. */
    void replayEndTransactionMarker(long producerId, short producerEpoch, boolean commit);

    /** The log is loaded: the shard serves requests from now on and may start its timers. */
    void onLoaded();

    /** The leadership ended or the broker stops; pending writes have failed and timers are cancelled already. */
    void onUnloaded();
}
