package io.cairn.broker.txn;

import io.cairn.broker.group.CoordinatorRecord;
import io.cairn.broker.group.ShardContext;
import io.cairn.broker.purgatory.PartitionPurgatory;
import io.cairn.isr.Partition;
import io.cairn.log.AppendOrigin;
import io.cairn.log.LogAppendInfo;
import io.cairn.log.Time;
import io.cairn.wire.error.Errors;
import io.cairn.wire.error.NotCoordinatorException;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The plumbing of one {@code __transaction_state} partition this broker leads, in one leader epoch (the coordinator
 * epoch): the writes to the partition (one batch, answered on the coordinator thread once the high watermark passes
 * it) and the timers, for the {@link TransactionManager} that holds the partition's transactional ids. A shard lives
 * from the leadership that loaded it until that leadership ends; a new leader epoch loads a new shard.
 *
 * <p>Thread-safety: confined to the coordinator thread (the executor it is given), except the manager's
 * {@link TransactionManager#replay}, which the loader calls before the shard is published to that thread.
 */
final class TransactionShard implements ShardContext {

    /** Where a shard is in its life. */
    enum State { LOADING, ACTIVE, CLOSED }

    /**
     * How long a write to the transaction log waits for the ISR before COORDINATOR_NOT_AVAILABLE. Kafka waits for the
     * transaction's own timeout; {@link ShardContext#write} carries none, so Kafka's request.timeout.ms default is
     * used for every write.
     */
    static final long WRITE_TIMEOUT_MS = 30_000L;

    private final Partition partition;
    private final int leaderEpoch;
    private final ScheduledExecutorService thread;
    private final Time time;
    private final PartitionPurgatory purgatory;
    private final TransactionManager manager;
    private final Map<String, ScheduledFuture<?>> timers = new HashMap<>();
    private State state = State.LOADING;

    TransactionShard(Partition partition, int leaderEpoch, ScheduledExecutorService thread, Time time,
                     PartitionPurgatory purgatory, TransactionConfig config, TransactionMarkerSender markers,
                     Supplier<CompletableFuture<Long>> producerIds) {
        this.partition = partition;
        this.leaderEpoch = leaderEpoch;
        this.thread = thread;
        this.time = time;
        this.purgatory = purgatory;
        this.manager = new TransactionManager(this, leaderEpoch, config, markers, producerIds, thread);
    }

    Partition partition() {
        return partition;
    }

    int leaderEpoch() {
        return leaderEpoch;
    }

    State state() {
        return state;
    }

    TransactionManager manager() {
        return manager;
    }

    /** The load is complete: the shard serves, resumes the markers of prepared transactions and starts timers. */
    void activate() {
        state = State.ACTIVE;
        manager.onLoaded();
    }

    /** Leadership ended or the broker stops: pending writes fail with NOT_COORDINATOR and timers stop. */
    void close() {
        if (state == State.CLOSED) {
            return;
        }
        state = State.CLOSED;
        manager.unload();
        timers.values().forEach(t -> t.cancel(false));
        timers.clear();
    }

    @Override
    public int partitionIndex() {
        return partition.partitionIndex();
    }

    @Override
    public long nowMs() {
        return time.milliseconds();
    }

    @Override
    public CompletableFuture<Void> write(List<CoordinatorRecord> records) {
        if (state == State.CLOSED || !partition.isLeader() || partition.leaderEpoch() != leaderEpoch) {
            return CompletableFuture.failedFuture(notCoordinator());
        }
        LogAppendInfo info;
        try {
            ByteBuffer batch = TransactionLog.toBatch(records, time.milliseconds());
            info = partition.appendRecordsToLeader(batch, AppendOrigin.COORDINATOR, -1);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        purgatory.awaitHighWatermark(partition, info.lastOffset() + 1, WRITE_TIMEOUT_MS).whenComplete((outcome,
                failure) -> thread.execute(() -> {
                    if (failure != null) {
                        done.completeExceptionally(failure);
                    } else if (outcome != Errors.NONE) {
                        done.completeExceptionally(outcome.exception());
                    } else if (state == State.CLOSED) {
                        done.completeExceptionally(notCoordinator());
                    } else {
                        done.complete(null);
                    }
                }));
        return done;
    }

    private NotCoordinatorException notCoordinator() {
        return new NotCoordinatorException("This broker no longer coordinates the transactions of "
                + "__transaction_state-" + partition.partitionIndex() + " (coordinator epoch " + leaderEpoch + ")");
    }

    @Override
    public void schedule(String key, long delayMs, Runnable task) {
        if (state == State.CLOSED) {
            return;
        }
        cancel(key);
        ScheduledFuture<?>[] self = new ScheduledFuture<?>[1];
        self[0] = thread.schedule(() -> {
            if (timers.get(key) != self[0]) {
                return;
            }
            timers.remove(key);
            if (state != State.CLOSED) {
                task.run();
            }
        }, Math.max(0, delayMs), TimeUnit.MILLISECONDS);
        timers.put(key, self[0]);
    }

    @Override
    public void cancel(String key) {
        ScheduledFuture<?> timer = timers.remove(key);
        if (timer != null) {
            timer.cancel(false);
        }
    }
}
