package io.cairn.broker.group;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.coordinator.ShardContext;
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
 * fall due, in time order) and writes that stay pending until the test completes or fails them.
 *
 * <p>Not thread-safe: the test thread plays the coordinator thread.
 */
public final class ClassicGroupTestShardContext implements ShardContext<CoordinatorRecord> {

    /** A write the test has not completed yet; a producer id ≥ 0 marks a transactional one. */
    record PendingWrite(List<CoordinatorRecord> records, long producerId, long firstOffset,
                        CompletableFuture<Long> future) {
    }

    private record Timer(long dueMs, long sequence, Runnable task) {
    }

    private long nowMs;
    private long sequence;
    /** The offset the next written record gets, as a log would assign it. */
    private long nextOffset;
    private final Map<String, Timer> timers = new HashMap<>();
    private final List<PendingWrite> pendingWrites = new ArrayList<>();
    private final List<List<CoordinatorRecord>> allWrites = new ArrayList<>();

    public ClassicGroupTestShardContext(long startMs) {
        this.nowMs = startMs;
    }

    @Override
    public int partitionIndex() {
        return 0;
    }

    @Override
    public int leaderEpoch() {
        return 0;
    }

    @Override
    public long nowMs() {
        return nowMs;
    }

    @Override
    public CompletableFuture<Long> write(List<CoordinatorRecord> records, long producerId, short producerEpoch,
                                         VerificationGuard verification) {
        CompletableFuture<Long> future = new CompletableFuture<>();
        pendingWrites.add(new PendingWrite(List.copyOf(records), producerId, nextOffset, future));
        nextOffset += records.size();
        allWrites.add(List.copyOf(records));
        return future;
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

    /** Moves the clock forward, running every timer that falls due on the way (at its due time). */
    public void advance(long ms) {
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

    /** The writes not yet completed, oldest first. */
    List<PendingWrite> pendingWrites() {
        return List.copyOf(pendingWrites);
    }

    /** Every write made so far, oldest first. */
    public List<List<CoordinatorRecord>> allWrites() {
        return List.copyOf(allWrites);
    }

    /** Completes every pending write successfully, oldest first. */
    public void completeWrites() {
        while (!pendingWrites.isEmpty()) {
            PendingWrite write = pendingWrites.remove(0);
            write.future().complete(write.firstOffset());
        }
    }

    /** Fails the oldest pending write with {@code error}. */
    public void failOldestWrite(Throwable error) {
        pendingWrites.remove(0).future().completeExceptionally(error);
    }

    /** The number of pending timers. */
    public int timerCount() {
        return timers.size();
    }
}
