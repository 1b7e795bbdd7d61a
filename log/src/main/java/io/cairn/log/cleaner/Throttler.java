package io.cairn.log.cleaner;

import io.cairn.log.Time;

/**
 * Bounds the cleaner's I/O to {@code log.cleaner.io.max.bytes.per.second} (Kafka's {@code Throttler}): after each
 * chunk, sleeps long enough that bytes / elapsed time stays at or below the rate. Thread-safe: the cleaner threads
 * share one, as Kafka's share theirs, so the rate bounds them together (a thread throttled holds the others back);
 * the rate changes live ({@link #updateDesiredRatePerSec}).
 */
public final class Throttler {

    private volatile double bytesPerSecond;
    private final Time time;
    private long windowStartNs;
    private long bytesInWindow;

    public Throttler(double bytesPerSecond, Time time) {
        this.bytesPerSecond = bytesPerSecond;
        this.time = time;
        this.windowStartNs = time.nanoseconds();
    }

    /** Kafka's {@code updateDesiredRatePerSec}: the rate from now on. */
    public void updateDesiredRatePerSec(double newBytesPerSecond) {
        bytesPerSecond = newBytesPerSecond;
    }

    /** Records {@code bytes} of I/O and sleeps when ahead of the rate. */
    public synchronized void maybeThrottle(long bytes) {
        if (bytesPerSecond == Double.MAX_VALUE || bytesPerSecond <= 0) {
            return;
        }
        bytesInWindow += bytes;
        long elapsedNs = time.nanoseconds() - windowStartNs;
        double targetNs = bytesInWindow / bytesPerSecond * 1e9;
        if (targetNs > elapsedNs) {
            long sleepMs = (long) Math.ceil((targetNs - elapsedNs) / 1e6);
            time.sleep(sleepMs);
        }
        if (time.nanoseconds() - windowStartNs > 1_000_000_000L) {
            windowStartNs = time.nanoseconds();
            bytesInWindow = 0;
        }
    }
}
