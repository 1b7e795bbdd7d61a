package io.cairn.broker.purgatory;

import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;

/**
 * A {@link Timer} that a test drives (Kafka's {@code MockTimer}): tasks run on the test's thread, in deadline order,
 * when {@link #advance} moves the clock past their deadline. Thread-safe.
 */
public final class MockTimer implements Timer {

    private record Task(long deadlineMs, long seq, Runnable action, boolean[] cancelled) {
    }

    private final PriorityQueue<Task> queue = new PriorityQueue<>((a, b) -> a.deadlineMs != b.deadlineMs
        ? Long.compare(a.deadlineMs, b.deadlineMs) : Long.compare(a.seq, b.seq));
    private long nowMs;
    private long seq;
    private boolean closed;

    @Override
    public synchronized Timeout schedule(Runnable task, long delayMs) {
        if (closed) {
            return null;
        }
        Task t = new Task(nowMs + Math.max(0L, delayMs), seq++, task, new boolean[1]);
        queue.add(t);
        return () -> {
            synchronized (this) {
                t.cancelled[0] = true;
                queue.remove(t);
            }
        };
    }

    /** Moves the clock forward by {@code ms} and runs the tasks now due (outside the timer's monitor). */
    public void advance(long ms) {
        List<Task> due = new ArrayList<>();
        synchronized (this) {
            nowMs += ms;
            while (!queue.isEmpty() && queue.peek().deadlineMs <= nowMs) {
                due.add(queue.poll());
            }
        }
        for (Task t : due) {
            boolean cancelled;
            synchronized (this) {
                cancelled = t.cancelled[0];
            }
            if (!cancelled) {
                t.action.run();
            }
        }
    }

    /** Tasks scheduled and neither run nor cancelled. */
    public synchronized int size() {
        return queue.size();
    }

    @Override
    public synchronized void close() {
        closed = true;
        queue.clear();
    }
}
