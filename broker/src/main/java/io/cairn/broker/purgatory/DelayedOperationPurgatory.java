package io.cairn.broker.purgatory;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Holds {@link DelayedOperation}s until an event completes them or their delay runs out (Kafka's
 * {@code DelayedOperationPurgatory}). An operation watches one or more keys (a partition); whoever changes what a
 * key stands for (an append moved the high watermark) calls {@link #checkAndComplete} with it, which retries the
 * operations watching that key. Expiry runs on the injected {@link Timer} (a thread that sleeps until the next
 * deadline, or a test's hand-driven clock), or on the operation's {@link DelayedOperation#expiryExecutor()} that
 * the timer hands it to: nothing polls. A completed or expired operation leaves every watch
 * list and the timer at once, so no waiter outlives its timeout.
 *
 * <p>The lost-wakeup race is closed by order: an operation is watched first and tried afterwards, so an event before
 * the watch is seen by that try and an event after it finds the operation in the watch list.
 *
 * <p>Thread-safety: thread-safe. Watch lists are concurrent sets in a concurrent map; an operation's own lock
 * serialises its {@code tryComplete} calls; its completion is a compare-and-set.
 *
 * @param <K> the key type (for fetches, a topic partition)
 */
public final class DelayedOperationPurgatory<K> implements AutoCloseable {

    private static final Logger LOGGER = LogManager.getLogger(DelayedOperationPurgatory.class);

    private final String name;
    private final Map<K, Set<DelayedOperation>> watchers = new ConcurrentHashMap<>();
    private final Set<DelayedOperation> pending = ConcurrentHashMap.newKeySet();
    private final Timer timer;
    private volatile boolean closed;

    /** A purgatory on the wall clock, its timer thread named {@code cairn-<name>-timer}. */
    public DelayedOperationPurgatory(String name) {
        this(name, new SystemTimer(name));
    }

    /** A purgatory expiring operations on {@code timer}, which it owns (closes). */
    public DelayedOperationPurgatory(String name, Timer timer) {
        this.name = name;
        this.timer = timer;
    }

    /**
     * Completes {@code operation} now if it can, else watches it under {@code keys} until an event or its delay
     * completes it. Returns true when it completed during this call.
     */
    public boolean tryCompleteElseWatch(DelayedOperation operation, Collection<K> keys) {
        List<K> watched = List.copyOf(keys);
        operation.setUnwatch(() -> unwatchAll(operation, watched));
        pending.add(operation);
        for (K key : watched) {
            watchers.compute(key, (k, set) -> {
                Set<DelayedOperation> ops = set != null ? set : ConcurrentHashMap.newKeySet();
                ops.add(operation);
                return ops;
            });
        }
        if (operation.safeTryComplete() || operation.isCompleted()) {
            unwatchAll(operation, watched);
            return true;
        }
        if (closed) {
            operation.expire();
            return false;
        }
        Timer.Timeout expiry = timer.schedule(() -> expire(operation), operation.delayMs());
        if (expiry == null) {
            operation.expire();
        } else {
            operation.setExpiry(expiry);
        }
        if (operation.isCompleted()) {
            unwatchAll(operation, watched);
        }
        return false;
    }

    /**
     * The timer's task: expires {@code operation} on its {@link DelayedOperation#expiryExecutor()} when it names one
     * (still on this thread when that executor refuses it), else right here.
     */
    private static void expire(DelayedOperation operation) {
        Executor executor = operation.expiryExecutor();
        if (executor != null && !operation.isCompleted()) {
            try {
                executor.execute(operation::expire);
                return;
            } catch (RejectedExecutionException e) {
                // Stopped (the broker is shutting down): expire here, so the operation is still answered.
            }
        }
        operation.expire();
    }

    /** Retries the operations watching {@code key}; returns how many completed. */
    public int checkAndComplete(K key) {
        Set<DelayedOperation> ops = watchers.get(key);
        if (ops == null) {
            return 0;
        }
        int completed = 0;
        for (DelayedOperation op : ops) {
            if (op.isCompleted()) {
                ops.remove(op);
            } else if (op.safeTryComplete()) {
                completed++;
            }
        }
        return completed;
    }

    private void unwatchAll(DelayedOperation operation, List<K> keys) {
        pending.remove(operation);
        for (K key : keys) {
            watchers.computeIfPresent(key, (k, set) -> {
                set.remove(operation);
                return set.isEmpty() ? null : set;
            });
        }
    }

    /** Operations waiting (watched and not completed); for tests and metrics. */
    public int pendingCount() {
        return pending.size();
    }

    /** Keys with at least one watcher; for tests and metrics. */
    public int watchedKeyCount() {
        return watchers.size();
    }

    /** Stops the timer and expires every waiting operation, so that none is left without an answer. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        timer.close();
        List<DelayedOperation> left = new ArrayList<>(pending);
        for (DelayedOperation op : left) {
            try {
                op.expire();
            } catch (RuntimeException e) {
                LOGGER.warn("Completing a delayed operation of purgatory {} on close failed: {}", name, e.toString());
            }
        }
        watchers.clear();
        pending.clear();
    }
}
