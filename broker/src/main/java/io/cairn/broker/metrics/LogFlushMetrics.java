package io.cairn.broker.metrics;

import io.cairn.log.LogFlushListener;

/**
 * Kafka's {@code kafka.log:type=LogFlushStats,name=LogFlushRateAndTimeMs}: one millisecond summary
 * ({@code kafka_log_logflushstats_logflushrateandtimems{quantile}}, {@code _count} whose {@code rate()} is Kafka's
 * flush rate) recording each segment flush the log module reports. Thread-safe; recording allocates nothing.
 */
public final class LogFlushMetrics implements LogFlushListener {

    private final MillisSummary flushTime;

    LogFlushMetrics(MillisSummaries summaries) {
        this.flushTime = summaries.register("kafka.log.logflushstats.logflushrateandtimems",
                "Milliseconds each log segment flush (fsync of its log and indexes) took");
    }

    @Override
    public void onSegmentFlushed(long nanos) {
        flushTime.record(MillisSummaries.ms(nanos));
    }
}
