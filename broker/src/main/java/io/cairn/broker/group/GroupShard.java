package io.cairn.broker.group;

import io.cairn.broker.group.record.GroupMetadataKey;
import io.cairn.broker.group.record.GroupMetadataValue;
import io.cairn.broker.group.record.OffsetCommitKey;
import io.cairn.broker.group.record.OffsetCommitValue;
import io.cairn.broker.purgatory.PartitionPurgatory;
import io.cairn.isr.Partition;
import io.cairn.log.AppendOrigin;
import io.cairn.log.LogAppendInfo;
import io.cairn.log.Time;
import io.cairn.wire.error.CoordinatorNotAvailableException;
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
import org.apache.logging.log4j.Logger;

/**
 * The coordinator state kept in one {@code __consumer_offsets} partition this broker leads, in one leader epoch: its
 * groups ({@link ClassicGroupManager}) and their offsets ({@link OffsetManager}), the writes to the partition and
 * the timers of its state machines. A shard lives from the leadership that loaded it until that leadership ends;
 * a new leader epoch loads a new shard from the log.
 *
 * <p>Thread-safety: confined to the coordinator thread (the executor it is given), except {@link #replay} which the
 * loader calls before the shard is published to that thread.
 */
public final class GroupShard implements ShardContext {

    private static final Logger LOGGER = org.apache.logging.log4j.LogManager.getLogger(GroupShard.class);

    /** Where a shard is in its life. */
    enum State { LOADING, ACTIVE, CLOSED }

    /** Kafka's {@code offsets.commit.timeout.ms} default: how long a write waits for the ISR. */
    static final long WRITE_TIMEOUT_MS = 5_000L;

    private final Partition partition;
    private final PartitionPurgatory purgatory;
    private final int leaderEpoch;
    private final ScheduledExecutorService thread;
    private final Time time;
    private final ClassicGroupManager groups;
    private final OffsetManager offsets;
    private final Map<String, ScheduledFuture<?>> timers = new HashMap<>();
    private State state = State.LOADING;

    GroupShard(Partition partition, int leaderEpoch, ScheduledExecutorService thread, Time time, GroupConfig config,
               PartitionPurgatory purgatory) {
        this.partition = partition;
        this.purgatory = purgatory;
        this.leaderEpoch = leaderEpoch;
        this.thread = thread;
        this.time = time;
        this.groups = new ClassicGroupManager(this, config);
        this.offsets = new OffsetManager(this, config);
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

    public ClassicGroupManager groups() {
        return groups;
    }

    public OffsetManager offsets() {
        return offsets;
    }

    /** Loading: applies one record of the partition's log. */
    void replay(CoordinatorRecord record) {
        if (record.key() instanceof OffsetCommitKey) {
            offsets.replay((OffsetCommitKey) record.key(), (OffsetCommitValue) record.value());
        } else if (record.key() instanceof GroupMetadataKey) {
            groups.replay(((GroupMetadataKey) record.key()).group(), (GroupMetadataValue) record.value());
        }
    }

    /** The load is complete: the shard starts serving and its state machines start their timers. */
    void activate() {
        state = State.ACTIVE;
        groups.onLoaded();
    }

    /** Leadership ended or the broker stops: pending requests get NOT_COORDINATOR and timers stop. */
    void close() {
        if (state == State.CLOSED) {
            return;
        }
        boolean wasActive = state == State.ACTIVE;
        state = State.CLOSED;
        timers.values().forEach(t -> t.cancel(false));
        timers.clear();
        if (wasActive) {
            groups.unload();
        }
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
            ByteBuffer batch = CoordinatorBatches.toBatch(records, time.milliseconds());
            info = partition.appendRecordsToLeader(batch, AppendOrigin.COORDINATOR, -1);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(writeError(e));
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        purgatory.awaitHighWatermark(partition, info.lastOffset() + 1, WRITE_TIMEOUT_MS).whenComplete((outcome,
                failure) -> thread.execute(() -> {
            if (failure != null) {
                done.completeExceptionally(writeError(failure));
            } else if (outcome != Errors.NONE) {
                done.completeExceptionally(writeError(outcome.exception()));
            } else if (state == State.CLOSED) {
                done.completeExceptionally(notCoordinator());
            } else {
                done.complete(null);
            }
        }));
        return done;
    }

    private NotCoordinatorException notCoordinator() {
        return new NotCoordinatorException("This broker no longer coordinates the groups of __consumer_offsets-"
            + partition.partitionIndex() + " (leader epoch " + leaderEpoch + ")");
    }

    /** The error a coordinator client sees for a failed write (Kafka's mapping of append errors). */
    private Throwable writeError(Throwable failure) {
        Errors error = Errors.forException(failure);
        switch (error) {
            case NOT_LEADER_OR_FOLLOWER:
            case NOT_COORDINATOR:
                return notCoordinator();
            case UNKNOWN_TOPIC_OR_PARTITION:
            case NOT_ENOUGH_REPLICAS:
            case NOT_ENOUGH_REPLICAS_AFTER_APPEND:
            case REQUEST_TIMED_OUT:
            case KAFKA_STORAGE_ERROR:
                return new CoordinatorNotAvailableException("Cannot write to __consumer_offsets-"
                    + partition.partitionIndex() + ": " + error);
            default:
                if (error == Errors.UNKNOWN_SERVER_ERROR) {
                    LOGGER.error("Write to __consumer_offsets-{} failed", partition.partitionIndex(), failure);
                }
                return failure;
        }
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
