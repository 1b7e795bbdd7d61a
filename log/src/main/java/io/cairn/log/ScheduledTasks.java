package io.cairn.log;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * One owner's view of the shared {@link Scheduler} pool ({@link Scheduler#tasks}): it schedules on the pool and keeps
 * track of its own tasks, so that its {@link #shutdown} cancels those and no other owner's. Terminated once shut down
 * and none of its tasks runs any longer.
 *
 * <p>Thread-safe. Submissions and shutdown take this object's monitor; a task's own code runs without it.
 */
final class ScheduledTasks extends AbstractExecutorService implements ScheduledExecutorService {

    private static final Logger LOGGER = LogManager.getLogger(ScheduledTasks.class);

    private final ScheduledExecutorService pool;
    private final String owner;
    /** Tasks scheduled and not finished (periodic ones until shutdown). */
    private final Set<Task<?>> tasks = ConcurrentHashMap.newKeySet();
    /** Tasks whose code is running now. */
    private final AtomicInteger running = new AtomicInteger();
    private volatile boolean shutdown;

    ScheduledTasks(ScheduledExecutorService pool, String owner) {
        this.pool = pool;
        this.owner = owner;
    }

    /** A task of this owner: tracked until done, skipped once the owner shut down even if the pool started it. */
    private final class Task<V> implements Runnable, Callable<V> {
        private final Callable<V> body;
        private final boolean periodic;
        private volatile Future<?> future;

        Task(Callable<V> body, boolean periodic) {
            this.body = body;
            this.periodic = periodic;
        }

        @Override
        public V call() throws Exception {
            // Counted before the shutdown flag is read: awaitTermination either sees this task running or the task
            // sees the flag and does nothing.
            running.incrementAndGet();
            try {
                if (shutdown) {
                    throw new CancellationException(owner + "'s tasks are shut down");
                }
                return body.call();
            } finally {
                if (!periodic) {
                    tasks.remove(this);
                }
                if (running.decrementAndGet() == 0 && shutdown) {
                    synchronized (ScheduledTasks.this) {
                        ScheduledTasks.this.notifyAll();
                    }
                }
            }
        }

        @Override
        public void run() {
            try {
                call();
            } catch (Exception e) {
                // Runnable bodies log their own failures (see logged); only a task skipped after shutdown ends here.
                LOGGER.trace("Skipped a task of {}", owner, e);
            }
        }

        void cancel() {
            Future<?> f = future;
            if (f != null) {
                f.cancel(false);
            }
        }
    }

    /** Kafka's {@code KafkaScheduler} wrapping: a failure is logged, and a periodic task stays scheduled. */
    private Callable<Void> logged(Runnable command) {
        return () -> {
            try {
                command.run();
            } catch (Throwable t) {
                LOGGER.error("Uncaught exception in scheduled task of {}", owner, t);
            }
            return null;
        };
    }

    private synchronized <F extends Future<?>> F submit(Task<?> task, Function<Task<?>, F> scheduleOnPool) {
        if (shutdown) {
            throw new RejectedExecutionException(owner + "'s tasks are shut down");
        }
        tasks.add(task);
        F future;
        try {
            future = scheduleOnPool.apply(task);
        } catch (RejectedExecutionException e) {
            tasks.remove(task);
            throw e;
        }
        task.future = future;
        return future;
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        return submit(new Task<>(logged(command), false), t -> pool.schedule((Runnable) t, delay, unit));
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        Task<V> task = new Task<>(callable, false);
        return submit(task, t -> pool.schedule((Callable<V>) task, delay, unit));
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        return submit(new Task<>(logged(command), true), t -> pool.scheduleAtFixedRate(t, initialDelay, period, unit));
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        return submit(new Task<>(logged(command), true), t -> pool.scheduleWithFixedDelay(t, initialDelay, delay,
                unit));
    }

    @Override
    public void execute(Runnable command) {
        schedule(command, 0L, TimeUnit.NANOSECONDS);
    }

    /** Cancels this owner's tasks that have not started; running ones finish. Other owners' tasks go on. */
    @Override
    public synchronized void shutdown() {
        shutdown = true;
        for (Task<?> task : tasks) {
            task.cancel();
        }
        tasks.clear();
        notifyAll();
    }

    /** As {@link #shutdown}, returning the tasks that never ran (running ones are not interrupted). */
    @Override
    public synchronized List<Runnable> shutdownNow() {
        List<Runnable> waiting = new ArrayList<>();
        for (Task<?> task : tasks) {
            Future<?> f = task.future;
            if (f != null && !f.isDone()) {
                waiting.add(task);
            }
        }
        shutdown();
        return waiting;
    }

    @Override
    public boolean isShutdown() {
        return shutdown;
    }

    @Override
    public boolean isTerminated() {
        return shutdown && running.get() == 0;
    }

    @Override
    public synchronized boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        while (!isTerminated()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        return true;
    }

    @Override
    public String toString() {
        return "ScheduledTasks[" + owner + ", " + tasks.size() + " scheduled, " + running.get() + " running]";
    }
}
