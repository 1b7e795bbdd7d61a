package io.cairn.broker.purgatory;

import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

/**
 * An operation that completes later (Kafka's {@code DelayedOperation}): when {@link #tryComplete()} finds its
 * condition met after an event on one of its keys, or when its delay runs out. {@link #onComplete()} runs exactly
 * once, on the thread that completed it (an appending thread, the request's own thread, or the purgatory's timer;
 * an operation whose completion reads files names an {@link #expiryExecutor()}, and its expiry runs there instead).
 *
 * <p>Thread-safety: {@link #tryComplete()} and the expiry both run under the operation's own lock, so subclasses see
 * one caller at a time and {@link #onComplete()} never overlaps a {@code tryComplete}; completion is a
 * compare-and-set, so {@link #forceComplete()} may race from any thread.
 */
public abstract class DelayedOperation {

    private final long delayMs;
    private final AtomicBoolean completed = new AtomicBoolean();
    private final ReentrantLock lock = new ReentrantLock();
    /** Set by the purgatory when the operation is watched; written before any other thread can complete it. */
    private volatile Runnable unwatch;
    /** The expiry task; written by the purgatory after watching, read by whoever completes the operation. */
    private volatile Timer.Timeout expiry;

    protected DelayedOperation(long delayMs) {
        this.delayMs = Math.max(0L, delayMs);
    }

    /** How long the operation may wait, in milliseconds. */
    public final long delayMs() {
        return delayMs;
    }

    /**
     * Checks the completion condition; when it holds, calls {@link #forceComplete()} and returns its result.
     * Called under the operation's lock, never after completion.
     */
    protected abstract boolean tryComplete();

    /** Does the work of completion (read, respond); runs exactly once. Must not throw. */
    protected abstract void onComplete();

    /** Called after {@link #onComplete()} when the operation completed because its delay ran out. */
    protected abstract void onExpiration();

    /**
     * Where the expiry (and so an expired {@link #onComplete()}) runs: null (the default) on the purgatory's timer
     * thread, which suits a completion that only answers; an operation that reads files on completion (a delayed
     * fetch) names the request-handler threads, as the broker's threading rule keeps disk work on them. When the
     * executor refuses the task (it stopped), the expiry runs on the timer thread after all.
     */
    protected Executor expiryExecutor() {
        return null;
    }

    /** Completes the operation unless it already completed; returns whether this call completed it. */
    public final boolean forceComplete() {
        if (!completed.compareAndSet(false, true)) {
            return false;
        }
        Timer.Timeout task = expiry;
        if (task != null) {
            task.cancel();
        }
        Runnable remove = unwatch;
        if (remove != null) {
            remove.run();
        }
        onComplete();
        return true;
    }

    public final boolean isCompleted() {
        return completed.get();
    }

    /** {@link #tryComplete()} under the lock, skipped once completed. */
    final boolean safeTryComplete() {
        lock.lock();
        try {
            return !isCompleted() && tryComplete();
        } finally {
            lock.unlock();
        }
    }

    /** Timer callback: completes the operation as expired, under the lock (no {@code tryComplete} runs meanwhile). */
    final void expire() {
        lock.lock();
        try {
            if (forceComplete()) {
                onExpiration();
            }
        } finally {
            lock.unlock();
        }
    }

    final void setUnwatch(Runnable unwatch) {
        this.unwatch = unwatch;
    }

    final void setExpiry(Timer.Timeout expiry) {
        this.expiry = expiry;
        if (isCompleted()) {
            expiry.cancel();
        }
    }
}
