package io.cairn.broker.quota;

/**
 * A mean over a sampled window, as Kafka's {@code Avg} over a {@code SampledStat} measures a quota's
 * {@code throttle-time} sensor (Kafka's default metric config: 2 samples of 30 s): values go into the current sample
 * until it is {@code windowMs} old, then into the next slot (the oldest reused); a sample that started
 * {@code samples × windowMs} ago or earlier no longer counts; the mean is the sum over the count of what is left,
 * NaN when nothing is.
 *
 * <p>Not thread-safe: the owning sensor synchronizes.
 */
final class SampledAvg {

    private final long windowMs;
    private final long[] startMs;
    private final double[] sums;
    private final long[] counts;
    private int current = -1;

    SampledAvg(int samples, long windowMs) {
        this.windowMs = windowMs;
        this.startMs = new long[samples];
        this.sums = new double[samples];
        this.counts = new long[samples];
    }

    /** Adds {@code value} at {@code nowMs}. */
    void record(double value, long nowMs) {
        if (current < 0 || nowMs - startMs[current] >= windowMs) {
            current = (current + 1) % startMs.length;
            startMs[current] = nowMs;
            sums[current] = 0;
            counts[current] = 0;
        }
        sums[current] += value;
        counts[current]++;
    }

    /** The mean at {@code nowMs} of the samples still in the window, NaN when there are none. */
    double measure(long nowMs) {
        double sum = 0;
        long count = 0;
        for (int i = 0; i < startMs.length; i++) {
            if (counts[i] > 0 && nowMs - startMs[i] < startMs.length * windowMs) {
                sum += sums[i];
                count += counts[i];
            }
        }
        return count == 0 ? Double.NaN : sum / count;
    }
}
