package io.cairn.broker.metrics;

import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;

/**
 * One gauge family built at scrape time: a Prometheus name, its help text, and one data point per label set.
 * Used by the collectors whose series follow the broker's state (partitions, groups). Not thread-safe: one per
 * scrape.
 */
final class GaugeFamily {

    private final GaugeSnapshot.Builder builder;
    private final String[] labelNames;

    GaugeFamily(String name, String help, String... labelNames) {
        this.builder = GaugeSnapshot.builder().name(name).help(help);
        this.labelNames = labelNames.clone();
    }

    /** Adds the data point of {@code labelValues} (in the order of the label names). */
    void add(double value, String... labelValues) {
        if (labelValues.length != labelNames.length) {
            throw new IllegalArgumentException("Expected " + labelNames.length + " label values");
        }
        builder.dataPoint(GaugeDataPointSnapshot.builder().value(value)
                .labels(Labels.of(labelNames.clone(), labelValues)).build());
    }

    GaugeSnapshot build() {
        return builder.build();
    }
}
