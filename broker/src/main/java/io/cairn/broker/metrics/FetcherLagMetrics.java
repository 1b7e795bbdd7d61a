package io.cairn.broker.metrics;

import io.cairn.isr.ReplicaManager;
import io.cairn.isr.fetcher.ReplicaFetcherManager;
import io.micrometer.core.instrument.Gauge;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;

/**
 * The follower side of replication, as Kafka's fetchers report it: {@code kafka_server_replicafetchermanager_maxlag
 * {clientId="Replica"}} (the largest lag of the partitions this broker follows, 0 when it follows none: Kafka's
 * {@code ReplicaFetcherManager} gauge exists on every broker) and, per followed partition answered at least once,
 * {@code kafka_server_fetcherlagmetrics_consumerlag{clientId,topic,partition}} ({@code clientId} is the fetcher
 * thread, {@code ReplicaFetcherThread-<fetcherId>-<leaderId>}). The lag is the leader's high watermark minus this
 * replica's next fetch offset at the last answer, as Kafka's {@code AbstractFetcherThread} sets it.
 *
 * <p>The fetcher threads keep one volatile per partition; this collector reads them at scrape time. Thread-safe.
 */
public final class FetcherLagMetrics implements MultiCollector {

    static final String CLIENT_ID = "clientId";

    private final ReplicaManager replicas;

    private FetcherLagMetrics(ReplicaManager replicas) {
        this.replicas = replicas;
    }

    /** Registers the max-lag gauge and the per-partition collector on {@code metrics}. */
    public static void register(BrokerMetrics metrics, ReplicaManager replicas) {
        FetcherLagMetrics lag = new FetcherLagMetrics(replicas);
        Gauge.builder("kafka.server.replicafetchermanager.maxlag", lag, FetcherLagMetrics::maxLag)
                .description("Largest replication lag (leader high watermark - fetch offset) of the followed "
                        + "partitions").tag(CLIENT_ID, "Replica").strongReference(true).register(metrics.registry());
        metrics.addCollector(lag);
    }

    private double maxLag() {
        ReplicaFetcherManager fetchers = replicas.replicaFetchers();
        return fetchers == null ? 0 : fetchers.maxLag();
    }

    @Override
    public MetricSnapshots collect() {
        GaugeFamily lag = new GaugeFamily("kafka_server_fetcherlagmetrics_consumerlag",
                "The leader's high watermark minus this follower's fetch offset", CLIENT_ID, "topic", "partition");
        ReplicaFetcherManager fetchers = replicas.replicaFetchers();
        if (fetchers != null) {
            fetchers.forEachLag((clientId, tp, value) -> lag.add(value, clientId, tp.topic(),
                    Integer.toString(tp.partition())));
        }
        return MetricSnapshots.of(lag.build());
    }
}
