package io.cairn.metadata.controller;

import java.util.PriorityQueue;
import java.util.Random;

/**
 * A seeded discrete-event scheduler: simulated time, events ordered by (time, insertion), run on the test thread.
 * Everything random in a simulation draws from {@link #random()}, so a seed replays the same run.
 */
final class SimScheduler {

    private record Event(long timeMs, long seq, Runnable task) implements Comparable<Event> {
        @Override
        public int compareTo(Event other) {
            int byTime = Long.compare(timeMs, other.timeMs);
            return byTime != 0 ? byTime : Long.compare(seq, other.seq);
        }
    }

    private final PriorityQueue<Event> queue = new PriorityQueue<>();
    private final Random random;
    private long now;
    private long seq;

    SimScheduler(long seed) {
        this.random = new Random(seed);
    }

    Random random() {
        return random;
    }

    long now() {
        return now;
    }

    void at(long delayMs, Runnable task) {
        queue.add(new Event(now + Math.max(0, delayMs), seq++, task));
    }

    /** Runs events until simulated time passes {@code untilMs}. */
    void runUntil(long untilMs) {
        while (!queue.isEmpty() && queue.peek().timeMs() <= untilMs) {
            Event event = queue.poll();
            now = event.timeMs();
            event.task().run();
        }
        now = Math.max(now, untilMs);
    }

    /** An event loop of one simulated node: tasks run in order, on the scheduler's thread. */
    EventLoop loop() {
        return new EventLoop() {
            @Override
            public void execute(Runnable task) {
                at(0, task);
            }

            @Override
            public void schedule(Runnable task, long delayMs) {
                at(delayMs, task);
            }

            @Override
            public long nowMs() {
                return now;
            }

            @Override
            public void close() {
            }
        };
    }
}
