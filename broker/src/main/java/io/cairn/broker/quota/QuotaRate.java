package io.cairn.broker.quota;

/**
 * A rate over a sampled window, as Kafka's {@code Rate} over a {@code SampledStat} measures a quota sensor: values
 * are summed into samples of {@code windowMs}, at most {@code samples + 1} are kept (the oldest reused), a sample
 * whose last event is {@code samples × windowMs} old is reset, and the rate is the sum divided by the time since the
 * oldest sample started, counted as at least {@code samples - 1} whole windows (so a first burst is spread over
 * them rather than measured over the few milliseconds it took) and at least 1 ms.
 *
 * <p>Not thread-safe: the owning sensor synchronizes.
 */
final class QuotaRate {

    private final int samples;
    private final long windowMs;
    private final long[] startMs;
    private final long[] lastEventMs;
    private final double[] values;
    /** How many of the slots are in use (Kafka adds samples lazily). */
    private int used;
    private int current;

    QuotaRate(int samples, long windowMs) {
        this.samples = samples;
        this.windowMs = windowMs;
        this.startMs = new long[samples + 1];
        this.lastEventMs = new long[samples + 1];
        this.values = new double[samples + 1];
    }

    /** Adds {@code value} (negative to take back what was recorded) at {@code nowMs}. */
    void record(double value, long nowMs) {
        if (used == 0) {
            reset(0, nowMs);
            used = 1;
        }
        if (nowMs - startMs[current] >= windowMs) {
            current = (current + 1) % (samples + 1);
            if (current >= used) {
                used++;
            }
            reset(current, nowMs);
        }
        values[current] += value;
        lastEventMs[current] = nowMs;
    }

    /** The rate per second at {@code nowMs}. */
    double measure(long nowMs) {
        long window = windowSizeMs(nowMs);
        double total = 0;
        for (int i = 0; i < used; i++) {
            total += values[i];
        }
        return total / (window / 1000.0);
    }

    /** Kafka's {@code Rate.windowSize}: the time the rate is measured over, after purging obsolete samples. */
    long windowSizeMs(long nowMs) {
        purgeObsolete(nowMs);
        if (used == 0) {
            reset(0, nowMs);
            used = 1;
        }
        long oldest = startMs[0];
        for (int i = 1; i < used; i++) {
            oldest = Math.min(oldest, startMs[i]);
        }
        long elapsed = nowMs - oldest;
        int fullWindows = (int) (elapsed / windowMs);
        if (fullWindows < samples - 1) {
            elapsed += (samples - 1 - fullWindows) * windowMs;
        }
        return Math.max(elapsed, 1);
    }

    private void purgeObsolete(long nowMs) {
        long expireAge = samples * windowMs;
        for (int i = 0; i < used; i++) {
            if (nowMs - lastEventMs[i] >= expireAge) {
                reset(i, nowMs);
            }
        }
    }

    private void reset(int index, long nowMs) {
        startMs[index] = nowMs;
        lastEventMs[index] = nowMs;
        values[index] = 0;
    }
}
