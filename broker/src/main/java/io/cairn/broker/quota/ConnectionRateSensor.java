package io.cairn.broker.quota;

/**
 * One connection-accept rate as Kafka's {@code ConnectionQuotas} measures it (KIP-612): a {@link QuotaRate} of
 * {@code quota.window.num} samples of {@code quota.window.size.seconds}, one count per accepted connection, bounded
 * by a connection creation rate that is passed in on each use (so that a changed limit applies at once). Over the
 * bound the throttle time is Kafka's {@code round((rate - bound) / bound × windowSize)}, capped at one window
 * ({@code QuotaUtils.boundedThrottleTime}).
 *
 * <p>Not thread-safe: the owner ({@code broker.net.ConnectionQuotas}) guards it with its lock.
 */
public final class ConnectionRateSensor {

    private final QuotaRate rate;
    private final long maxThrottleMs;
    private long lastRecordMs;

    /**
     * @param samples  {@code quota.window.num}
     * @param windowMs {@code quota.window.size.seconds} in ms, also the longest throttle
     */
    public ConnectionRateSensor(int samples, long windowMs) {
        this.rate = new QuotaRate(samples, windowMs);
        this.maxThrottleMs = windowMs;
    }

    /** Counts one connection at {@code nowMs}; how long accepting must wait to bring the rate back to the bound. */
    public int recordAndGetThrottleTimeMs(int bound, long nowMs) {
        lastRecordMs = nowMs;
        rate.record(1, nowMs);
        if (bound == Integer.MAX_VALUE) {
            return 0;
        }
        double measured = rate.measure(nowMs);
        if (measured <= bound) {
            return 0;
        }
        long throttle = Math.round((measured - bound) / bound * rate.windowSizeMs(nowMs));
        return (int) Math.min(throttle, maxThrottleMs);
    }

    /** Takes back a connection counted at {@code nowMs} that was not accepted after all. */
    public void unrecord(long nowMs) {
        rate.record(-1, nowMs);
    }

    /** Connections per second at {@code nowMs}. */
    public double rate(long nowMs) {
        return rate.measure(nowMs);
    }

    /** When a connection was last counted, for the expiry of idle sensors. */
    public long lastRecordMs() {
        return lastRecordMs;
    }
}
