package io.cairn.broker.metrics;

import io.micrometer.core.instrument.Clock;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.Quantile;
import io.prometheus.metrics.model.snapshots.Quantiles;
import io.prometheus.metrics.model.snapshots.SummarySnapshot;
import io.prometheus.metrics.model.snapshots.SummarySnapshot.SummaryDataPointSnapshot;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Kafka's Yammer histograms and timers as the dialect exports them, for every component: summaries without base
 * unit (times in milliseconds) with the 50th, 75th, 95th, 98th, 99th and 999th percentiles of the last 30 to 60
 * seconds, a cumulative {@code _count} and {@code _sum}, and a {@code _max} gauge over the same window
 * ({@link MillisSummary} says why these are not Micrometer meters). Registered on the Prometheus registry as one
 * collector; a disabled set hands out {@link MillisSummary#NOOP}.
 *
 * <p>Thread-safe: series are added on first use of a component while scrapes run.
 */
final class MillisSummaries implements MultiCollector {

    /** Kafka's histogram percentiles (Yammer's 50th ... 999th). */
    private static final double[] QUANTILES = {0.5, 0.75, 0.95, 0.98, 0.99, 0.999};
    static final double NANOS_PER_MS = 1_000_000.0;

    private final Clock clock;
    private final boolean enabled;
    private final Map<String, Family> families = new ConcurrentHashMap<>();

    MillisSummaries(Clock clock, boolean enabled) {
        this.clock = clock;
        this.enabled = enabled;
    }

    /** The series of one summary name, each with its label values. */
    private record Family(String help, List<Series> series) {
    }

    private record Series(Labels labels, MillisSummary summary) {
    }

    /**
     * The summary {@code name} (dotted, as Micrometer names are: {@code kafka.log.logflushstats.x}) with {@code tags}
     * (name, value pairs); every series of one name has the same tag names.
     */
    MillisSummary register(String name, String help, String... tags) {
        if (!enabled) {
            return MillisSummary.NOOP;
        }
        String[] labelNames = new String[tags.length / 2];
        String[] labelValues = new String[tags.length / 2];
        for (int i = 0; i < labelNames.length; i++) {
            labelNames[i] = tags[2 * i];
            labelValues[i] = tags[2 * i + 1];
        }
        MillisSummary summary = new MillisSummary(clock);
        families.computeIfAbsent(name.replace('.', '_'), n -> new Family(help, new CopyOnWriteArrayList<>()))
                .series().add(new Series(Labels.of(labelNames, labelValues), summary));
        return summary;
    }

    @Override
    public MetricSnapshots collect() {
        List<MetricSnapshot> snapshots = new ArrayList<>();
        families.forEach((name, family) -> {
            SummarySnapshot.Builder summaries = SummarySnapshot.builder().name(name).help(family.help());
            GaugeSnapshot.Builder maxima = GaugeSnapshot.builder().name(name + "_max").help(family.help()
                    + " (maximum of the last 30 to 60 s)");
            for (Series series : family.series()) {
                double[] values = series.summary().quantilesAndMax(QUANTILES);
                List<Quantile> quantiles = new ArrayList<>(QUANTILES.length);
                for (int i = 0; i < QUANTILES.length; i++) {
                    quantiles.add(new Quantile(QUANTILES[i], values[i]));
                }
                summaries.dataPoint(SummaryDataPointSnapshot.builder().count(series.summary().count())
                        .sum(series.summary().sum()).quantiles(Quantiles.of(quantiles)).labels(series.labels())
                        .build());
                maxima.dataPoint(GaugeDataPointSnapshot.builder().value(values[QUANTILES.length])
                        .labels(series.labels()).build());
            }
            snapshots.add(summaries.build());
            snapshots.add(maxima.build());
        });
        return MetricSnapshots.of(snapshots.toArray(MetricSnapshot[]::new));
    }

    /** {@code nanos} (negative: 0) in milliseconds. */
    static double ms(long nanos) {
        return Math.max(0, nanos) / NANOS_PER_MS;
    }
}
