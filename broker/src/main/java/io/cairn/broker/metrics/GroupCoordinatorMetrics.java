package io.cairn.broker.metrics;

import io.cairn.broker.group.GroupCoordinator;
import io.cairn.broker.group.GroupCounters;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.ToDoubleFunction;

/**
 * Kafka 4's {@code kafka.server:type=group-coordinator-metrics} meters of the group coordinator, by Kafka's names:
 * the cumulative {@code offset-commit-count}, {@code offset-expiration-count}, {@code offset-deletion-count} and
 * {@code group-completed-rebalance-count} (classic groups, the only kind Cairn runs; {@code rate()} of each is Kafka's
 * {@code -rate}) as {@code kafka_server_group_coordinator_metrics_<name>}, and {@code partition-load-time-avg} /
 * {@code -max} (milliseconds over the last 30 to 60 s, NaN without loads). The group counts by state are
 * {@link GroupMetadataCollector}'s.
 *
 * <p>Stateless apart from the load-time statistic; thread-safe.
 */
public final class GroupCoordinatorMetrics {

    private static final String PREFIX = "kafka.server.group.coordinator.metrics.";

    private GroupCoordinatorMetrics() {
    }

    /** Registers the meters of {@code groups} on {@code metrics} and listens to its partition loads. */
    public static void register(BrokerMetrics metrics, GroupCoordinator groups) {
        MeterRegistry registry = metrics.registry();
        GroupCounters counters = groups.counters();
        count(registry, "offset.commit.count", "Offsets committed by OffsetCommit since start", counters,
                GroupCounters::offsetCommits);
        count(registry, "offset.expiration.count", "Committed offsets expired since start", counters,
                GroupCounters::offsetExpirations);
        count(registry, "offset.deletion.count", "Committed offsets deleted by OffsetDelete since start", counters,
                GroupCounters::offsetDeletions);
        count(registry, "group.completed.rebalance.count", "Classic group rebalances completed since start",
                counters, GroupCounters::completedRebalances);
        groups.onPartitionLoaded(loadTimes(registry, PREFIX, "__consumer_offsets")::record);
    }

    private static void count(MeterRegistry registry, String name, String help, GroupCounters counters,
            ToDoubleFunction<GroupCounters> value) {
        Gauge.builder(PREFIX + name, counters, value).description(help).strongReference(true).register(registry);
    }

    /** Kafka's {@code partition-load-time-avg} and {@code -max} gauges under {@code prefix}; their statistic. */
    static WindowedAvgMax loadTimes(MeterRegistry registry, String prefix, String topic) {
        WindowedAvgMax loads = new WindowedAvgMax(registry.config().clock());
        Gauge.builder(prefix + "partition.load.time.avg", loads, WindowedAvgMax::avg)
                .description("Mean milliseconds to load a " + topic + " partition (last 30 to 60 s)")
                .strongReference(true).register(registry);
        Gauge.builder(prefix + "partition.load.time.max", loads, WindowedAvgMax::max)
                .description("Largest milliseconds to load a " + topic + " partition (last 30 to 60 s)")
                .strongReference(true).register(registry);
        return loads;
    }
}
