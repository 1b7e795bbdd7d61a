package io.cairn.log;

/**
 * The clock of the log, injected so tests drive roll, retention and flush deadlines with a mock (Kafka's
 * {@code Time}). {@link #SYSTEM} is the wall clock; implementations are thread-safe.
 */
public interface Time {

    /** The system clock. */
    Time SYSTEM = new Time() {
        @Override
        public long milliseconds() {
            return System.currentTimeMillis();
        }

        @Override
        public long nanoseconds() {
            return System.nanoTime();
        }

        @Override
        public void sleep(long ms) {
            try {
                Thread.sleep(ms);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    };

    /** Wall-clock milliseconds since the epoch (record timestamps, retention, roll). */
    long milliseconds();

    /** A monotonic clock for durations. */
    long nanoseconds();

    /** Waits {@code ms} milliseconds (throttling); a mock clock just moves forward. */
    void sleep(long ms);
}
