package io.cairn.broker.purgatory;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Holds {@link DelayedOperation}s until an event completes them or their delay runs out (Kafka's
 * {@code DelayedOperationPurgatory}). An operation watches one or more keys (a partition); whoever changes what a
 * key stands for (an append moved the high watermark) calls {@link #checkAndComplete} with it, which retries the
 * operations watching that key. Expiry runs on one timer thread that sleeps until the next deadline: nothing polls.
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
    private final ScheduledThreadPoolExecutor timer;
    private volatile boolean closed;

    /** A purgatory whose timer thread is named {@code cairn-<name>-purgatory}. */
    public DelayedOperationPurgatory(String name) {
        this.name = name;
        this.timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "cairn-" + name + "-purgatory");
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
        timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
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
        try {
            operation.setExpiry(timer.schedule(operation::expire, operation.delayMs(), TimeUnit.MILLISECONDS));
        } catch (RejectedExecutionException e) {
            operation.expire();
        }
        if (operation.isCompleted()) {
            unwatchAll(operation, watched);
        }
        return false;
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
        timer.shutdownNow();
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
