package io.cairn.broker.metrics;

import io.micrometer.core.instrument.Clock;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

/**
 * The idle fraction (0 to 1) of a set of threads between two reads, from their accumulated busy time: Kafka's
 * {@code NetworkProcessorAvgIdlePercent} and {@code RequestHandlerAvgIdlePercent}, read at scrape time. The first
 * read covers the time since creation.
 *
 * <p>Thread-safe (reads are serialised).
 */
final class IdleRatio {

    private final Clock clock;
    private final LongSupplier busyNanos;
    private final IntSupplier threads;
    private long lastWallNanos;
    private long lastBusyNanos;
    private double lastRatio = 1.0;

    /** @param threads the number of threads now (read at each sample: a pool may be resized live) */
    IdleRatio(Clock clock, LongSupplier busyNanos, IntSupplier threads) {
        this.clock = clock;
        this.busyNanos = busyNanos;
        this.threads = threads;
        this.lastWallNanos = clock.monotonicTime();
        this.lastBusyNanos = busyNanos.getAsLong();
    }

    /** The idle fraction since the previous read (the previous answer when no time has passed). */
    synchronized double read() {
        long wall = clock.monotonicTime();
        long busy = busyNanos.getAsLong();
        long elapsed = (wall - lastWallNanos) * Math.max(1, threads.getAsInt());
        if (elapsed > 0) {
            lastRatio = Math.min(1.0, Math.max(0.0, 1.0 - (double) (busy - lastBusyNanos) / elapsed));
            lastWallNanos = wall;
            lastBusyNanos = busy;
        }
        return lastRatio;
    }
}
