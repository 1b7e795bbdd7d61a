package io.cairn.broker.quota;

/**
 * Kafka's {@code TokenBucket} stat, which its controller mutation quota (KIP-599) measures: credits refill at the
 * quota's rate per second up to a burst of {@code rate × samples × window seconds}, each mutation takes its count
 * (the credits may go below zero), and the quota is exhausted while they are below zero; the time to get back to zero
 * is {@code -credits / rate} seconds. Unlike a sampled rate, one large burst is paid off at the quota's rate instead of
 * holding the rate up until its sample leaves the window. A new bucket is full (Kafka's starts empty at time 0, hence
 * full at any real time). The rate is passed in on each use, so that a changed quota applies at once, as Kafka
 * updates the metric's config.
 *
 * <p>Not thread-safe: the owner synchronizes on the bucket.
 */
final class TokenBucket {

    private final int samples;
    private final long windowMs;
    private double tokens = Double.NaN;
    private long lastUpdateMs;

    TokenBucket(int samples, long windowMs) {
        this.samples = samples;
        this.windowMs = windowMs;
    }

    /** The credits left at {@code nowMs} under {@code rate} per second. */
    double tokens(double rate, long nowMs) {
        refill(rate, nowMs);
        return tokens;
    }

    /** Takes {@code value} credits at {@code nowMs}. */
    void record(double value, double rate, long nowMs) {
        refill(rate, nowMs);
        tokens = Math.min(burst(rate), tokens - value);
    }

    /** Kafka's {@code ControllerMutationQuotaManager.throttleTimeMs}: ms until the credits are back at zero. */
    static int throttleTimeMs(double tokens, double rate) {
        return tokens >= 0 ? 0 : (int) Math.min(Math.round(-tokens / rate * 1000), Integer.MAX_VALUE);
    }

    private void refill(double rate, long nowMs) {
        if (Double.isNaN(tokens)) {
            tokens = burst(rate);
        } else {
            tokens = Math.min(burst(rate), tokens + rate * (nowMs - lastUpdateMs) / 1000.0);
        }
        lastUpdateMs = nowMs;
    }

    private double burst(double rate) {
        return samples * (windowMs / 1000.0) * rate;
    }
}
