package io.cairn.broker.metrics;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;

/**
 * Kafka's Yammer histograms and timers as the dialect exports them: a summary without base unit (times in
 * milliseconds) with the 50th, 75th, 95th, 98th, 99th and 999th percentiles over the last minute. Stateless.
 */
final class MillisSummaries {

    /** Kafka's histogram percentiles (Yammer's 50th ... 999th). */
    private static final double[] QUANTILES = {0.5, 0.75, 0.95, 0.98, 0.99, 0.999};
    static final double NANOS_PER_MS = 1_000_000.0;

    private MillisSummaries() {
    }

    /** The summary {@code name} with {@code tags} (name, value pairs). */
    static DistributionSummary register(MeterRegistry registry, String name, String help, String... tags) {
        return DistributionSummary.builder(name).description(help).tags(tags).publishPercentiles(QUANTILES)
                .distributionStatisticExpiry(Duration.ofMinutes(1)).register(registry);
    }

    /** {@code nanos} (negative: 0) in milliseconds. */
    static double ms(long nanos) {
        return Math.max(0, nanos) / NANOS_PER_MS;
    }
}
