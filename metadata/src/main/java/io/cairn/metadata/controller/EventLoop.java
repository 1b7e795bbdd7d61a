package io.cairn.metadata.controller;

import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The single thread (or simulated scheduler) the active controller runs on, with its clock. Implementations are
 * thread-safe: tasks may be submitted from any thread and run one at a time, in submission order; tasks submitted
 * after {@link #close()} are dropped. The real loop times each event for a {@link ControllerEventListener}.
 */
public interface EventLoop extends AutoCloseable {

    void execute(Runnable task);

    void schedule(Runnable task, long delayMs);

    /** Milliseconds of a monotonic clock. */
    long nowMs();

    @Override
    void close();

    /** A real event loop on one daemon thread with the given name, telling {@code listener} of each event's times. */
    static EventLoop singleThread(String name, ControllerEventListener listener) {
        ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread thread = new Thread(r, name);
            thread.setDaemon(true);
            return thread;
        });
        return new EventLoop() {
            @Override
            public void execute(Runnable task) {
                if (!executor.isShutdown()) {
                    try {
                        executor.execute(timed(task, System.nanoTime()));
                    } catch (RejectedExecutionException e) {
                        // Closed concurrently: nothing runs on a closed loop.
                    }
                }
            }

            @Override
            public void schedule(Runnable task, long delayMs) {
                if (!executor.isShutdown()) {
                    try {
                        long due = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(0, delayMs));
                        executor.schedule(timed(task, due), delayMs, TimeUnit.MILLISECONDS);
                    } catch (RejectedExecutionException e) {
                        // Closed concurrently: nothing runs on a closed loop.
                    }
                }
            }

            private Runnable timed(Runnable task, long readyNanos) {
                return () -> {
                    long start = System.nanoTime();
                    try {
                        task.run();
                    } finally {
                        listener.onEvent(Math.max(0, start - readyNanos), System.nanoTime() - start);
                    }
                };
            }

            @Override
            public long nowMs() {
                return TimeUnit.NANOSECONDS.toMillis(System.nanoTime());
            }

            @Override
            public void close() {
                executor.shutdownNow();
            }
        };
    }
}
