package io.cairn.broker.metrics;

import io.cairn.broker.quota.ControllerMutationQuotaManager;
import io.cairn.broker.quota.QuotaSensorMetrics;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;

/**
 * The controller mutation quota's per-client metrics (KIP-599), Kafka's {@code kafka.server:type=ControllerMutation,
 * user=<user>,client-id=<client-id>} attributes {@code mutation-rate}, {@code tokens} and {@code throttle-time}, in the
 * names Strimzi's jmx_exporter quota rule gives them: {@code kafka_server_quota_mutation_rate},
 * {@code kafka_server_quota_tokens} and {@code kafka_server_quota_throttle_time}, labelled
 * {@code resource="ControllerMutation"}, {@code user} and {@code clientId} ("" for the tag the applying quota does not
 * use, which Prometheus stores as no label). One series per client with a sensor: a client under a
 * {@code controller_mutation_rate} quota that mutated topics through this node's active controller in the last hour.
 * Read at scrape time.
 *
 * <p>Thread-safe: reads the quota manager's thread-safe snapshot.
 */
public final class ControllerMutationQuotaCollector implements MultiCollector {

    private static final String RESOURCE = "resource";
    private static final String USER = "user";
    private static final String CLIENT_ID = "clientId";
    /** Kafka's {@code QuotaType.CONTROLLER_MUTATION} name, the JMX type of these metrics. */
    private static final String CONTROLLER_MUTATION = "ControllerMutation";

    private final ControllerMutationQuotaManager quotas;

    public ControllerMutationQuotaCollector(ControllerMutationQuotaManager quotas) {
        this.quotas = quotas;
    }

    @Override
    public MetricSnapshots collect() {
        GaugeFamily rate = new GaugeFamily("kafka_server_quota_mutation_rate",
                "Partitions created or deleted per second over the quota window, per user/client-id", RESOURCE, USER,
                CLIENT_ID);
        GaugeFamily tokens = new GaugeFamily("kafka_server_quota_tokens",
                "Remaining tokens in the token bucket per user/client-id", RESOURCE, USER, CLIENT_ID);
        GaugeFamily throttle = new GaugeFamily("kafka_server_quota_throttle_time",
                "Average throttle time in ms per user/client-id", RESOURCE, USER, CLIENT_ID);
        for (QuotaSensorMetrics sensor : quotas.sensorMetrics()) {
            rate.add(sensor.rate(), CONTROLLER_MUTATION, sensor.user(), sensor.clientId());
            tokens.add(sensor.tokens(), CONTROLLER_MUTATION, sensor.user(), sensor.clientId());
            throttle.add(sensor.throttleTimeMs(), CONTROLLER_MUTATION, sensor.user(), sensor.clientId());
        }
        return MetricSnapshots.of(rate.build(), tokens.build(), throttle.build());
    }
}
