package io.cairn.broker.coordinator;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Runs the tasks of one coordinator partition in submission order, one at a time, on a pool shared by every partition
 * of the kind (the role of Kafka's {@code EventAccumulator}, which hands a partition's events to at most one
 * coordinator thread at a time). A partition holds a pool thread for at most {@link #QUANTUM} tasks before it queues
 * again behind the others, so one busy shard cannot starve the rest.
 *
 * <p>Thread-safety: thread-safe; {@link #execute} may be called from any thread. Each task happens-before the next
 * (the queue's monitor orders them), so the state a task leaves is visible to the next one whatever thread runs it.
 */
final class SerialExecutor implements Executor {

    /** How many tasks of one partition run before its drain yields the pool thread. */
    static final int QUANTUM = 64;

    private static final Logger LOGGER = LogManager.getLogger(SerialExecutor.class);

    private final Executor pool;
    private final String name;
    /** Guarded by {@code this}. */
    private final ArrayDeque<Runnable> tasks = new ArrayDeque<>();
    /** Whether a drain is queued or running on the pool; guarded by {@code this}. */
    private boolean scheduled;

    SerialExecutor(Executor pool, String name) {
        this.pool = pool;
        this.name = name;
    }

    /** Queues {@code task}; throws {@link RejectedExecutionException} when the pool no longer runs tasks. */
    @Override
    public void execute(Runnable task) {
        synchronized (this) {
            tasks.add(task);
            if (scheduled) {
                return;
            }
            scheduled = true;
        }
        submitDrain();
    }

    private void submitDrain() {
        try {
            pool.execute(this::drain);
        } catch (RejectedExecutionException e) {
            synchronized (this) {
                tasks.clear();
                scheduled = false;
            }
            throw e;
        }
    }

    private void drain() {
        for (int i = 0; i < QUANTUM; i++) {
            Runnable task;
            synchronized (this) {
                task = tasks.poll();
                if (task == null) {
                    scheduled = false;
                    return;
                }
            }
            try {
                task.run();
            } catch (RuntimeException e) {
                LOGGER.error("A task of {} failed", name, e);
            }
        }
        try {
            submitDrain();
        } catch (RejectedExecutionException e) {
            // Stopping: the queued tasks are dropped; their callers were answered by the runtime's close.
        }
    }
}
