package io.cairn.broker.metrics;

import io.micrometer.core.instrument.Clock;
import java.util.Arrays;

/**
 * Kafka's sampled {@code Avg} and {@code Max} statistics (its {@code -avg}/{@code -max} metrics, such as
 * {@code commit-latency-avg} or {@code partition-load-time-max}): the mean and the largest of the values of the
 * last two 30 s samples, NaN when there are none, as Kafka reports them. For rare events (a metadata commit, a
 * coordinator load), not for the request path.
 *
 * <p>Thread-safe (synchronized).
 */
final class WindowedAvgMax {

    private static final long SAMPLE_NANOS = 30_000_000_000L;

    private final Clock clock;
    private final long[] epochs = {Long.MIN_VALUE, Long.MIN_VALUE};
    private final double[] sums = new double[2];
    private final long[] counts = new long[2];
    private final double[] maxima = new double[2];

    WindowedAvgMax(Clock clock) {
        this.clock = clock;
    }

    synchronized void record(double value) {
        long epoch = clock.monotonicTime() / SAMPLE_NANOS;
        int slot = (int) (epoch & 1);
        if (epochs[slot] != epoch) {
            epochs[slot] = epoch;
            sums[slot] = 0;
            counts[slot] = 0;
            maxima[slot] = Double.NEGATIVE_INFINITY;
        }
        sums[slot] += value;
        counts[slot]++;
        maxima[slot] = Math.max(maxima[slot], value);
    }

    synchronized double avg() {
        double sum = 0;
        long count = 0;
        for (int slot : live()) {
            sum += sums[slot];
            count += counts[slot];
        }
        return count == 0 ? Double.NaN : sum / count;
    }

    synchronized double max() {
        double max = Double.NaN;
        for (int slot : live()) {
            max = Double.isNaN(max) ? maxima[slot] : Math.max(max, maxima[slot]);
        }
        return max;
    }

    /** The slots of the current and the previous sample. */
    private int[] live() {
        long epoch = clock.monotonicTime() / SAMPLE_NANOS;
        int n = 0;
        int[] slots = new int[2];
        for (int slot = 0; slot < 2; slot++) {
            if (epochs[slot] == epoch || epochs[slot] == epoch - 1) {
                slots[n++] = slot;
            }
        }
        return Arrays.copyOf(slots, n);
    }
}
