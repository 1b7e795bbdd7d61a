package io.cairn.broker.purgatory;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The wall-clock {@link Timer}: one daemon thread, {@code cairn-<name>-timer}, that sleeps until the next deadline.
 * A cancelled task leaves the queue at once (remove-on-cancel), so completed operations hold no timer memory.
 *
 * <p>Thread-safety: thread-safe.
 */
public final class SystemTimer implements Timer {

    private final ScheduledThreadPoolExecutor executor;

    public SystemTimer(String name) {
        this.executor = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "cairn-" + name + "-timer");
            t.setDaemon(true);
            return t;
        });
        executor.setRemoveOnCancelPolicy(true);
        executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    @Override
    public Timeout schedule(Runnable task, long delayMs) {
        try {
            ScheduledFuture<?> future = executor.schedule(task, Math.max(0L, delayMs), TimeUnit.MILLISECONDS);
            return () -> future.cancel(false);
        } catch (RejectedExecutionException e) {
            return null;
        }
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
