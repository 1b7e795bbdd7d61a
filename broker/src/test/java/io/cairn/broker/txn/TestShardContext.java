package io.cairn.broker.txn;

import io.cairn.broker.coordinator.CoordinatorBatches;
import io.cairn.broker.coordinator.ShardContext;
import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.log.AppendOrigin;
import io.cairn.log.PartitionLog;
import io.cairn.log.producer.VerificationGuard;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A {@link ShardContext} for unit tests: a manual clock, a manual timer queue ({@link #advance} runs the tasks that
 * fall due, in time order) and writes that complete at once (appended to a real log when one is given) unless the
 * test holds them ({@link #holdWrites}) to complete or fail them itself.
 *
 * <p>Not thread-safe: the test thread plays the coordinator thread.
 */
final class TestShardContext implements ShardContext<CoordinatorRecord> {

    /** A write the test holds. */
    record PendingWrite(List<CoordinatorRecord> records, CompletableFuture<Long> future) {
    }

    private record Timer(long dueMs, long sequence, Runnable task) {
    }

    private final PartitionLog log;
    private final int leaderEpoch;
    private long nowMs;
    private long sequence;
    private boolean hold;
    private final Map<String, Timer> timers = new HashMap<>();
    private final List<PendingWrite> pending = new ArrayList<>();
    private final List<CoordinatorRecord> written = new ArrayList<>();

    TestShardContext(long startMs, PartitionLog log) {
        this(startMs, log, 0);
    }

    TestShardContext(long startMs, PartitionLog log, int leaderEpoch) {
        this.nowMs = startMs;
        this.log = log;
        this.leaderEpoch = leaderEpoch;
    }

    @Override
    public int partitionIndex() {
        return 0;
    }

    @Override
    public int leaderEpoch() {
        return leaderEpoch;
    }

    @Override
    public long nowMs() {
        return nowMs;
    }

    @Override
    public CompletableFuture<Long> write(List<CoordinatorRecord> records, long producerId, short producerEpoch,
                                         VerificationGuard verification) {
        CompletableFuture<Long> future = new CompletableFuture<>();
        if (hold) {
            pending.add(new PendingWrite(List.copyOf(records), future));
        } else {
            commit(records);
            future.complete((long) written.size() - records.size());
        }
        return future;
    }

    private void commit(List<CoordinatorRecord> records) {
        written.addAll(records);
        if (log != null) {
            log.appendAsLeader(CoordinatorBatches.toBatch(CoordinatorBatches.encode(TransactionLogSerde.INSTANCE,
                    records), nowMs, -1L, (short) -1), 0, AppendOrigin.COORDINATOR);
        }
    }

    @Override
    public void schedule(String key, long delayMs, Runnable task) {
        timers.put(key, new Timer(nowMs + delayMs, sequence++, task));
    }

    @Override
    public void cancel(String key) {
        timers.remove(key);
    }

    @Override
    public void execute(Runnable task) {
        task.run();
    }

    /** From now on writes wait for {@link #completeNextWrite} or {@link #failNextWrite}. */
    void holdWrites() {
        hold = true;
    }

    void completeNextWrite() {
        PendingWrite write = pending.remove(0);
        commit(write.records());
        write.future().complete((long) written.size() - write.records().size());
    }

    void failNextWrite(Throwable failure) {
        pending.remove(0).future().completeExceptionally(failure);
    }

    List<PendingWrite> pendingWrites() {
        return pending;
    }

    /** Every record committed so far, in order. */
    List<CoordinatorRecord> written() {
        return written;
    }

    CoordinatorRecord lastWritten() {
        return written.get(written.size() - 1);
    }

    /** Moves the clock forward, running every timer that falls due on the way (at its due time). */
    void advance(long ms) {
        long target = nowMs + ms;
        while (true) {
            Optional<Map.Entry<String, Timer>> next = timers.entrySet().stream()
                    .filter(entry -> entry.getValue().dueMs() <= target)
                    .min(Comparator.comparingLong((Map.Entry<String, Timer> entry) -> entry.getValue().dueMs())
                            .thenComparingLong(entry -> entry.getValue().sequence()));
            if (next.isEmpty()) {
                break;
            }
            timers.remove(next.get().getKey());
            nowMs = Math.max(nowMs, next.get().getValue().dueMs());
            next.get().getValue().task().run();
        }
        nowMs = target;
    }
}
