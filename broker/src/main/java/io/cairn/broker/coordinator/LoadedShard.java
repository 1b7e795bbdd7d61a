package io.cairn.broker.coordinator;

import io.cairn.broker.purgatory.PartitionPurgatory;
import io.cairn.broker.purgatory.Timer;
import io.cairn.isr.Partition;
import io.cairn.log.AppendOrigin;
import io.cairn.log.LogAppendInfo;
import io.cairn.log.Time;
import io.cairn.log.producer.VerificationGuard;
import io.cairn.wire.error.CoordinatorNotAvailableException;
import io.cairn.wire.error.Errors;
import io.cairn.wire.error.NotCoordinatorException;
import io.cairn.wire.error.RecordTooLargeException;
import io.cairn.wire.record.RecordBatch;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * One shard as the runtime runs it: a partition this broker leads, in one leader epoch, with its state machine,
 * its timers, the batch its operations' records accumulate into, and the appended batches waiting for the high
 * watermark. Lives from the leadership that loaded it until that leadership ends.
 *
 * <p>Writes (Kafka's {@code CoordinatorRuntime} batching): an operation's records join the open batch, which is
 * appended when {@code append.linger.ms} has passed since it opened, when the next operation's records would take it
 * beyond the partition's {@code max.message.bytes}, or before a transactional batch or a marker (those are never
 * accumulated: they are appended at once, after the open batch, so the log keeps the operations' order). Appended
 * batches complete in offset order once the high watermark passes them; each operation is answered then.
 *
 * <p>Thread-safety: confined to its partition's {@link SerialExecutor}, except that the state machine is fed by the
 * loader thread before the shard becomes active (the executor's hand-over orders it).
 */
final class LoadedShard<S extends CoordinatorShard<R>, R> implements ShardContext<R> {

    private static final Logger LOGGER = LogManager.getLogger(LoadedShard.class);

    /** Where a shard is in its life. */
    enum State { LOADING, ACTIVE, CLOSED }

    /** One operation's records in a batch. */
    private record Op(CompletableFuture<Long> future, int firstIndex) {
    }

    /** The batch operations add records to until it is appended. */
    private static final class OpenBatch {
        final long producerId;
        final short producerEpoch;
        final VerificationGuard verification;
        final List<CoordinatorBatches.Encoded> records = new ArrayList<>();
        final List<Op> ops = new ArrayList<>();
        int bytes = RecordBatch.RECORD_BATCH_OVERHEAD;
        Timer.Timeout linger;

        OpenBatch(long producerId, short producerEpoch, VerificationGuard verification) {
            this.producerId = producerId;
            this.producerEpoch = producerEpoch;
            this.verification = verification;
        }
    }

    /** A batch in the log, waiting for the high watermark to pass {@code endOffset}. */
    private record Appended(long baseOffset, long endOffset, List<Op> ops) {
        void complete() {
            ops.forEach(op -> op.future().complete(baseOffset + op.firstIndex()));
        }

        void fail(Throwable error) {
            ops.forEach(op -> op.future().completeExceptionally(error));
        }
    }

    /** A pending timer; identity tells a stale firing from the current one. */
    private static final class TimerEntry {
        Timer.Timeout timeout;
    }

    private final CoordinatorRuntimeConfig<S, R> config;
    private final SerialExecutor executor;
    private final Partition partition;
    private final int leaderEpoch;
    private final Time time;
    private final Timer timer;
    private final PartitionPurgatory purgatory;
    private final S shard;
    private final Map<String, TimerEntry> timers = new HashMap<>();
    private final ArrayDeque<Appended> appended = new ArrayDeque<>();
    private OpenBatch batch;
    private State state = State.LOADING;

    LoadedShard(CoordinatorRuntimeConfig<S, R> config, SerialExecutor executor, Partition partition, Time time,
                Timer timer, PartitionPurgatory purgatory) {
        this.config = config;
        this.executor = executor;
        this.partition = partition;
        this.leaderEpoch = partition.leaderEpoch();
        this.time = time;
        this.timer = timer;
        this.purgatory = purgatory;
        this.shard = config.shardFactory().apply(this);
    }

    Partition partition() {
        return partition;
    }

    @Override
    public int leaderEpoch() {
        return leaderEpoch;
    }

    State state() {
        return state;
    }

    S shard() {
        return shard;
    }

    /** The load is complete: the shard starts serving. */
    void activate() {
        state = State.ACTIVE;
        shard.onLoaded();
    }

    /** Leadership ended or the broker stops: timers stop, every pending write fails with NOT_COORDINATOR. */
    void close() {
        if (state == State.CLOSED) {
            return;
        }
        boolean wasActive = state == State.ACTIVE;
        state = State.CLOSED;
        timers.values().forEach(t -> cancel(t.timeout));
        timers.clear();
        if (wasActive) {
            shard.onUnloaded();
        }
        OpenBatch open = batch;
        batch = null;
        if (open != null) {
            cancel(open.linger);
            open.ops.forEach(op -> op.future().completeExceptionally(notCoordinator()));
        }
        while (!appended.isEmpty()) {
            appended.poll().fail(notCoordinator());
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
    public CompletableFuture<Long> write(List<R> records, long producerId, short producerEpoch,
                                         VerificationGuard verification) {
        if (records.isEmpty()) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("A write needs at least one record"));
        }
        if (!isWritable()) {
            return CompletableFuture.failedFuture(notCoordinator());
        }
        List<CoordinatorBatches.Encoded> encoded;
        try {
            encoded = CoordinatorBatches.encode(config.serde(), records);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        int bytes = 0;
        for (CoordinatorBatches.Encoded record : encoded) {
            bytes += record.sizeUpperBound();
        }
        int maxBytes = partition.log().config().maxMessageBytes();
        if (RecordBatch.RECORD_BATCH_OVERHEAD + (long) bytes > maxBytes) {
            return CompletableFuture.failedFuture(new RecordTooLargeException("Message batch size is "
                + (RecordBatch.RECORD_BATCH_OVERHEAD + bytes) + " bytes in append to partition "
                + partition.topicPartition() + " which exceeds the maximum configured size of " + maxBytes + "."));
        }
        boolean transactional = producerId >= 0;
        if (transactional || (batch != null && batch.bytes + bytes > maxBytes)) {
            flush();
        }
        if (batch == null) {
            batch = open(producerId, producerEpoch, transactional ? verification : null);
        }
        CompletableFuture<Long> future = new CompletableFuture<>();
        batch.ops.add(new Op(future, batch.records.size()));
        batch.records.addAll(encoded);
        batch.bytes += bytes;
        if (transactional || config.settings().appendLingerMs() == 0) {
            flush();
        }
        return future;
    }

    /**
     * Appends the marker ending {@code producerId}'s transaction after every record written before it, and once it
     * is committed applies it to the state machine ({@link CoordinatorShard#replayEndTransactionMarker}).
     */
    CompletableFuture<Void> writeEndTransactionMarker(long producerId, short producerEpoch, int coordinatorEpoch,
                                                      boolean commit) {
        if (!isWritable()) {
            return CompletableFuture.failedFuture(notCoordinator());
        }
        flush();
        ByteBuffer marker = CoordinatorBatches.endTransactionMarker(time.milliseconds(), producerId, producerEpoch,
            coordinatorEpoch, commit);
        CompletableFuture<Long> written = new CompletableFuture<>();
        append(marker, List.of(new Op(written, 0)), null);
        return written.thenRun(() -> shard.replayEndTransactionMarker(producerId, producerEpoch, commit));
    }

    private OpenBatch open(long producerId, short producerEpoch, VerificationGuard verification) {
        OpenBatch opened = new OpenBatch(producerId, producerEpoch, verification);
        if (producerId < 0 && config.settings().appendLingerMs() > 0) {
            opened.linger = timer.schedule(() -> runOnShard(() -> {
                if (batch == opened) {
                    flush();
                }
            }), config.settings().appendLingerMs());
        }
        return opened;
    }

    /** Appends the open batch, if any. */
    private void flush() {
        OpenBatch open = batch;
        if (open == null) {
            return;
        }
        batch = null;
        cancel(open.linger);
        ByteBuffer bytes;
        try {
            bytes = CoordinatorBatches.toBatch(open.records, time.milliseconds(), open.producerId,
                open.producerEpoch);
        } catch (RuntimeException e) {
            open.ops.forEach(op -> op.future().completeExceptionally(e));
            return;
        }
        append(bytes, open.ops, open.verification);
    }

    private void append(ByteBuffer bytes, List<Op> ops, VerificationGuard verification) {
        LogAppendInfo info;
        try {
            info = partition.appendRecordsToLeader(bytes, AppendOrigin.COORDINATOR, -1, verification);
        } catch (RuntimeException e) {
            Throwable error = writeError(e);
            ops.forEach(op -> op.future().completeExceptionally(error));
            return;
        }
        Appended waiting = new Appended(info.firstOffset(), info.lastOffset() + 1, ops);
        appended.add(waiting);
        purgatory.awaitHighWatermark(partition, waiting.endOffset(), config.settings().writeTimeoutMs())
            .whenComplete((outcome, failure) -> runOnShard(() -> onAwaited(waiting, outcome, failure)));
    }

    /** The purgatory answered for {@code waiting}: on success, it and every batch before it are committed. */
    private void onAwaited(Appended waiting, Errors outcome, Throwable failure) {
        if (!appended.contains(waiting)) {
            return;
        }
        if (failure != null || outcome != Errors.NONE) {
            appended.remove(waiting);
            waiting.fail(writeError(failure != null ? failure : outcome.exception()));
            return;
        }
        while (!appended.isEmpty() && appended.peek().endOffset() <= waiting.endOffset()) {
            appended.poll().complete();
        }
    }

    @Override
    public void schedule(String key, long delayMs, Runnable task) {
        if (state == State.CLOSED) {
            return;
        }
        cancel(key);
        TimerEntry entry = new TimerEntry();
        timers.put(key, entry);
        entry.timeout = timer.schedule(() -> runOnShard(() -> {
            if (timers.get(key) != entry) {
                return;
            }
            timers.remove(key);
            if (state != State.CLOSED) {
                task.run();
            }
        }), Math.max(0L, delayMs));
        if (entry.timeout == null) {
            timers.remove(key);
        }
    }

    @Override
    public void cancel(String key) {
        TimerEntry entry = timers.remove(key);
        if (entry != null) {
            cancel(entry.timeout);
        }
    }

    private static void cancel(Timer.Timeout timeout) {
        if (timeout != null) {
            timeout.cancel();
        }
    }

    @Override
    public void execute(Runnable task) {
        runOnShard(task);
    }

    private void runOnShard(Runnable task) {
        try {
            executor.execute(task);
        } catch (RejectedExecutionException e) {
            // Stopping: close() answered every pending write already.
        }
    }

    private boolean isWritable() {
        return state != State.CLOSED && partition.isLeader() && partition.leaderEpoch() == leaderEpoch;
    }

    private NotCoordinatorException notCoordinator() {
        return new NotCoordinatorException("This broker no longer coordinates " + partition.topicPartition()
            + " (leader epoch " + leaderEpoch + ")");
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
                return new CoordinatorNotAvailableException("Cannot write to " + partition.topicPartition() + ": "
                    + error);
            default:
                if (error == Errors.UNKNOWN_SERVER_ERROR) {
                    LOGGER.error("Write to {} failed", partition.topicPartition(), failure);
                }
                return failure;
        }
    }
}
