package io.cairn.broker.metrics;

import io.micrometer.core.instrument.Clock;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;

/**
 * One series of a millisecond (or byte) summary as Kafka's Yammer histograms are exported: a cumulative count and
 * sum, and the quantiles and the maximum of the values of the last 30 to 60 seconds.
 *
 * <p>Design note: recording is on the request path (nine summaries per request), so it is one clock read, two
 * atomic increments (the value's bucket and the count), an add to the sum and a compare with the window's maximum;
 * no allocation, no lock, no resizing. Values are kept in thousandths (0.001 ms resolution) in log-linear buckets
 * ({@value #SUB_BUCKETS} per power of two, so a quantile is within 1/{@value #SUB_BUCKETS} of the true value), in two
 * windows of {@value #WINDOW_SECONDS} s each; a value goes to the window of its time, which the first value of a new
 * window clears (a value recorded concurrently with that clear may land in either window). Micrometer's percentile
 * summaries, which this replaces, record each value into three auto-resizing {@code DoubleHistogram}s and were the
 * largest part of what metrics cost the produce path.
 *
 * <p>Thread-safe.
 */
public final class MillisSummary {

    static final int WINDOW_SECONDS = 30;
    static final int SUB_BUCKETS = 16;
    private static final int SUB_BITS = 4;
    /** Values are stored as thousandths of the unit. */
    private static final double SCALE = 1000.0;
    /** The largest power of two kept apart; larger values count in the last bucket (2^47 thousandths: 4 years). */
    private static final int MAX_EXPONENT = 47;
    static final int BUCKETS = (MAX_EXPONENT - SUB_BITS + 2) * SUB_BUCKETS;
    private static final long WINDOW_NANOS = WINDOW_SECONDS * 1_000_000_000L;

    /** A summary that records nothing ({@code metrics.enabled=false}). */
    static final MillisSummary NOOP = new MillisSummary(null);

    private final Clock clock;
    private final LongAdder count = new LongAdder();
    private final DoubleAdder sum = new DoubleAdder();
    private final Window[] windows = {new Window(), new Window()};

    /** A summary on {@code clock}; null: {@link #NOOP}. */
    MillisSummary(Clock clock) {
        this.clock = clock;
    }

    /** The values of one window of time. */
    private static final class Window {
        final AtomicLongArray counts = new AtomicLongArray(BUCKETS);
        final AtomicLong max = new AtomicLong();
        /** The window number ({@code monotonic nanos / window}) held; written under this object's monitor. */
        volatile long epoch = Long.MIN_VALUE;
    }

    /** Records one value ({@code value} below 0 counts as 0). */
    public void record(double value) {
        if (clock == null) {
            return;
        }
        double positive = Math.max(0, value);
        long units = (long) (positive * SCALE);
        long epoch = clock.monotonicTime() / WINDOW_NANOS;
        Window window = windows[(int) (epoch & 1)];
        if (window.epoch != epoch) {
            roll(window, epoch);
        }
        window.counts.incrementAndGet(bucket(units));
        long max = window.max.get();
        while (units > max && !window.max.compareAndSet(max, units)) {
            max = window.max.get();
        }
        count.increment();
        sum.add(positive);
    }

    private static void roll(Window window, long epoch) {
        synchronized (window) {
            if (window.epoch < epoch) {
                for (int i = 0; i < BUCKETS; i++) {
                    window.counts.set(i, 0);
                }
                window.max.set(0);
                window.epoch = epoch;
            }
        }
    }

    /** The bucket of {@code units}: exact below {@value #SUB_BUCKETS}, then {@value #SUB_BUCKETS} per power of 2. */
    static int bucket(long units) {
        if (units < SUB_BUCKETS) {
            return (int) units;
        }
        int exponent = Math.min(63 - Long.numberOfLeadingZeros(units), MAX_EXPONENT);
        int sub = (int) ((Math.min(units, (2L << MAX_EXPONENT) - 1) >>> (exponent - SUB_BITS)) & (SUB_BUCKETS - 1));
        return (exponent - SUB_BITS + 1) * SUB_BUCKETS + sub;
    }

    /** The middle of {@code bucket}'s range, in units (the value itself for the exact buckets). */
    static double middle(int bucket) {
        if (bucket < SUB_BUCKETS) {
            return bucket;
        }
        int exponent = bucket / SUB_BUCKETS + SUB_BITS - 1;
        long width = 1L << (exponent - SUB_BITS);
        long lower = (long) (SUB_BUCKETS + bucket % SUB_BUCKETS) << (exponent - SUB_BITS);
        return lower + (width - 1) / 2.0;
    }

    public long count() {
        return count.sum();
    }

    public double sum() {
        return sum.sum();
    }

    /**
     * The values at {@code quantiles} (ascending) among those of the current and the previous window, 0 each when
     * there are none, and their maximum as the last element.
     */
    double[] quantilesAndMax(double[] quantiles) {
        long epoch = clock.monotonicTime() / WINDOW_NANOS;
        long[] merged = new long[BUCKETS];
        long total = 0;
        long max = 0;
        for (Window window : windows) {
            long held = window.epoch;
            if (held != epoch && held != epoch - 1) {
                continue;
            }
            for (int i = 0; i < BUCKETS; i++) {
                long n = window.counts.get(i);
                merged[i] += n;
                total += n;
            }
            max = Math.max(max, window.max.get());
        }
        double[] values = new double[quantiles.length + 1];
        int bucket = 0;
        long seen = 0;
        for (int q = 0; q < quantiles.length && total > 0; q++) {
            long rank = Math.max(1, (long) Math.ceil(quantiles[q] * total));
            while (seen + merged[bucket] < rank) {
                seen += merged[bucket];
                bucket++;
            }
            values[q] = Math.min(middle(bucket), max) / SCALE;
        }
        values[quantiles.length] = max / SCALE;
        return values;
    }
}
