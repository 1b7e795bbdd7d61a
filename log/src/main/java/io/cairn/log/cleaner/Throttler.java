package io.cairn.log.cleaner;

import io.cairn.log.Time;

/**
 * Bounds the cleaner's I/O to {@code log.cleaner.io.max.bytes.per.second} (Kafka's {@code Throttler}): after each
 * chunk, sleeps long enough that bytes / elapsed time stays at or below the rate. Not thread-safe: one per
 * cleaner thread.
 */
public final class Throttler {

    private final double bytesPerSecond;
    private final Time time;
    private long windowStartNs;
    private long bytesInWindow;

    public Throttler(double bytesPerSecond, Time time) {
        this.bytesPerSecond = bytesPerSecond;
        this.time = time;
        this.windowStartNs = time.nanoseconds();
    }

    /** Records {@code bytes} of I/O and sleeps when ahead of the rate. */
    public void maybeThrottle(long bytes) {
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
