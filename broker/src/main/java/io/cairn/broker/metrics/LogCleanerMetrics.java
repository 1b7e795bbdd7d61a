package io.cairn.broker.metrics;

import io.cairn.log.LogManager;
import io.cairn.log.cleaner.LogCleaner;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * Kafka's log cleaner gauges over the cleaners of the broker's log directories (Cairn runs one cleaner per
 * directory, Kafka one set of threads per broker, so the broker-wide gauges combine them as Kafka combines its
 * threads): {@code kafka_log_logcleanermanager_max_dirty_percent} (largest), {@code …_time_since_last_run_ms}
 * (smallest), and per {@code logDirectory} {@code …_uncleanable_partitions_count} and {@code …_uncleanable_bytes};
 * {@code kafka_log_logcleaner_cleaner_recopy_percent} and {@code …_max_clean_time_secs} of the last pass (largest),
 * {@code kafka_log_logcleaner_max_compaction_delay_secs} (largest: how long a dirty record was past its
 * {@code max.compaction.lag.ms} at the last look for work), {@code kafka_log_logcleaner_deadthreadcount}. Not
 * published: Kafka's {@code max-buffer-utilization-percent} (the offset map's fill is not reported yet).
 *
 * <p>Stateless: the gauges read {@link LogCleaner#stats()} at scrape time. Thread-safe.
 */
public final class LogCleanerMetrics {

    private static final String MANAGER = "kafka.log.logcleanermanager.";
    private static final String CLEANER = "kafka.log.logcleaner.";

    private LogCleanerMetrics() {
    }

    /** Registers the gauges of the cleaners of {@code logManagers} on {@code metrics}. */
    public static void register(BrokerMetrics metrics, List<LogManager> logManagers) {
        MeterRegistry registry = metrics.registry();
        List<LogCleaner> cleaners = logManagers.stream().map(LogManager::cleaner).toList();
        gauge(registry, MANAGER + "max.dirty.percent", "Dirty share (%) of the dirtiest cleanable partition",
                cleaners, s -> s.maxDirtyPercent(), true);
        gauge(registry, MANAGER + "time.since.last.run.ms", "Milliseconds since the cleaner last looked for work",
                cleaners, s -> s.timeSinceLastRunMs(), false);
        gauge(registry, CLEANER + "cleaner.recopy.percent", "Bytes written per byte read (%) by the last clean",
                cleaners, s -> s.recopyPercent(), true);
        gauge(registry, CLEANER + "max.clean.time.secs", "Seconds the last clean took", cleaners,
                s -> s.cleanTimeMs() / 1000, true);
        gauge(registry, CLEANER + "max.compaction.delay.secs", "Seconds the most overdue dirty record was past its "
                + "max.compaction.lag.ms at the last look for work", cleaners, s -> s.maxCompactionDelayMs() / 1000,
                true);
        Gauge.builder(CLEANER + "deadthreadcount", cleaners, list -> list.stream().filter(c -> c.stats().dead())
                .count()).description("Cleaner threads that have stopped").strongReference(true).register(registry);
        for (LogManager manager : logManagers) {
            String dir = manager.logDir().toAbsolutePath().toString();
            LogCleaner cleaner = manager.cleaner();
            Gauge.builder(MANAGER + "uncleanable.partitions.count", cleaner, c -> c.stats().uncleanablePartitions())
                    .description("Partitions whose cleaning failed; the cleaner skips them")
                    .tag("logDirectory", dir).strongReference(true).register(registry);
            Gauge.builder(MANAGER + "uncleanable.bytes", cleaner, c -> c.stats().uncleanableBytes())
                    .description("Dirty bytes of the partitions whose cleaning failed")
                    .tag("logDirectory", dir).strongReference(true).register(registry);
        }
    }

    /** A gauge of the largest ({@code max}) or smallest value of {@code value} over the cleaners. */
    private static void gauge(MeterRegistry registry, String name, String help, List<LogCleaner> cleaners,
            ToDoubleFunction<LogCleaner.Stats> value, boolean max) {
        Gauge.builder(name, cleaners, list -> {
            double result = max ? 0 : Double.MAX_VALUE;
            for (LogCleaner cleaner : list) {
                double v = value.applyAsDouble(cleaner.stats());
                result = max ? Math.max(result, v) : Math.min(result, v);
            }
            return list.isEmpty() ? 0 : result;
        }).description(help).strongReference(true).register(registry);
    }
}
