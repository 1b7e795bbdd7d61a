package io.cairn.log;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The broker's pool of background threads (Kafka's {@code KafkaScheduler}): {@code background.threads} daemon threads
 * named {@code kafka-scheduler-N}, shared by the periodic and delayed work of the log managers (retention, time
 * flush, background flushes of rolled segments, delayed file deletes) and the replica manager (high-watermark
 * checkpoints, ISR expiration). Each owner schedules through its own view, {@link #tasks}: shutting a view down
 * cancels that owner's waiting tasks and waits for its running ones only, so an owner closes without stopping the
 * others; the pool itself is shut down by whoever made it, after the owners. {@link #resize} changes the number of
 * threads while tasks keep running ({@code kafka-configs --alter --add-config background.threads=N}).
 *
 * <p>Thread-safe.
 */
public final class Scheduler implements AutoCloseable {

    /** Kafka's thread name prefix; a number counting from 0 follows it. */
    public static final String THREAD_NAME_PREFIX = "kafka-scheduler-";

    private static final Logger LOGGER = LogManager.getLogger(Scheduler.class);

    private final ScheduledThreadPoolExecutor pool;
    private final AtomicInteger threadId = new AtomicInteger();

    /** A pool of {@code threads} threads ({@code background.threads}, at least 1). */
    public Scheduler(int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("background.threads must be at least 1: " + threads);
        }
        pool = new ScheduledThreadPoolExecutor(threads, runnable -> {
            Thread t = new Thread(runnable, THREAD_NAME_PREFIX + threadId.getAndIncrement());
            t.setDaemon(true);
            return t;
        });
        // A cancelled delayed delete leaves the queue at once rather than at its deadline (file.delete.delay.ms).
        pool.setRemoveOnCancelPolicy(true);
        pool.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        pool.setContinueExistingPeriodicTasksAfterShutdownPolicy(false);
    }

    /**
     * A view of this pool for one owner: what it schedules runs on the pool's threads; its {@code shutdown} cancels
     * only the tasks scheduled through it that have not started (a running one finishes; an interrupt would close the
     * file channel under a flush) and {@code awaitTermination} waits for those running. A task that throws is logged
     * with {@code owner}'s name, and a periodic one keeps its schedule (Kafka's {@code KafkaScheduler}).
     */
    public ScheduledExecutorService tasks(String owner) {
        return new ScheduledTasks(pool, owner);
    }

    /** The number of threads ({@code background.threads}) now. */
    public int poolSize() {
        return pool.getCorePoolSize();
    }

    /**
     * Sets the number of threads to {@code threads} (Kafka's {@code resizeThreadPool}): more start when tasks wait,
     * the ones too many end once idle; scheduled tasks keep their schedule.
     */
    public void resize(int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("background.threads must be at least 1: " + threads);
        }
        pool.setCorePoolSize(threads);
        LOGGER.debug("Resized the background thread pool to {} threads", threads);
    }

    /** Drops every waiting task and waits (up to 30 s) for the running ones; the owners closed theirs first. */
    @Override
    public void close() {
        pool.shutdown();
        try {
            if (!pool.awaitTermination(30, TimeUnit.SECONDS)) {
                LOGGER.warn("Background tasks still running 30 s after the scheduler was shut down");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
