package io.cairn.broker.share;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.coordinator.ShardContext;
import io.cairn.log.producer.VerificationGuard;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A {@link ShardContext} for the share shard's unit tests: a manual clock and writes that are committed at once,
 * unless the test holds them ({@link #holdWrites}) to complete or fail them itself. Not thread-safe: the test thread
 * plays the coordinator thread.
 */
final class ShareTestContext implements ShardContext<CoordinatorRecord> {

    record PendingWrite(List<CoordinatorRecord> records, CompletableFuture<Long> future) {
    }

    long nowMs = 1_000L;
    private boolean hold;
    private final List<PendingWrite> pending = new ArrayList<>();
    final List<CoordinatorRecord> written = new ArrayList<>();

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
        if (hold) {
            pending.add(new PendingWrite(List.copyOf(records), future));
        } else {
            written.addAll(records);
            future.complete((long) written.size() - records.size());
        }
        return future;
    }

    void holdWrites() {
        hold = true;
    }

    List<PendingWrite> pending() {
        return pending;
    }

    void completeNextWrite() {
        PendingWrite write = pending.remove(0);
        written.addAll(write.records());
        write.future().complete((long) written.size() - write.records().size());
    }

    void failNextWrite(Throwable failure) {
        pending.remove(0).future().completeExceptionally(failure);
    }

    @Override
    public void schedule(String key, long delayMs, Runnable task) {
        throw new UnsupportedOperationException("The share shard sets no timers");
    }

    @Override
    public void cancel(String key) {
    }

    @Override
    public void execute(Runnable task) {
        task.run();
    }
}
