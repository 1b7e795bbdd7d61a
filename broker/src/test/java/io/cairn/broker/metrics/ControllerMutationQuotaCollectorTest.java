package io.cairn.broker.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.quota.ClientQuotas;
import io.cairn.log.MockTime;
import io.cairn.metadata.controller.ControllerMutationQuotas.MutationQuota;
import io.cairn.metadata.image.ClientQuotaEntity;
import io.cairn.metadata.image.MetadataImage;
import io.micrometer.core.instrument.MockClock;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Kafka's per-client {@code ControllerMutation} quota metrics ({@code mutation-rate}, {@code tokens},
 * {@code throttle-time}) on {@code /metrics}, in the names of Strimzi's jmx_exporter quota rule.
 */
class ControllerMutationQuotaCollectorTest {

    private final MockTime clock = new MockTime(1_000_000L);

    @Test
    void aClientsMutationRateTokensAndThrottleTimeShouldBeScrapedPerUserAndClientId() {
        // Given: 2 partitions per second for client id "app" (11 samples of 1 s: a burst of 22)
        BrokerMetrics metrics = BrokerMetrics.withClock(new MockClock());
        ClientQuotas quotas = new ClientQuotas(11, 1, 11, 1, clock);
        quotas.load(new MetadataImage(1L, "c", 1, 1L, Map.of(), Map.of(), Map.of(), Map.of(), 0L, 0L, Map.of(),
                Map.of(), Map.of(), Map.of(ClientQuotaEntity.of(ClientQuotaEntity.CLIENT_ID, "app"),
                        Map.of("controller_mutation_rate", 2.0))));
        metrics.addCollector(new ControllerMutationQuotaCollector(quotas.controllerMutation()));
        MutationQuota request = quotas.controllerMutation().newQuota("alice", "app", true);
        quotas.controllerMutation().newQuota("bob", "other", true).record(5);

        // When: a CreateTopics of a 30-partition topic (accepted: -8 credits left) and a 1-partition one (refused
        // for 4 s), answered
        request.record(30);
        request.record(1);
        int throttle = request.complete();

        // Then: 30 partitions over the 10 s a first sample is spread over; a client without a quota has no
        // sensor
        assertThat(throttle).isEqualTo(4000);
        assertThat(metrics.scrape())
                .contains("kafka_server_quota_mutation_rate{clientId=\"app\",resource=\"ControllerMutation\","
                        + "user=\"\"} 3.0")
                .contains("kafka_server_quota_tokens{clientId=\"app\",resource=\"ControllerMutation\",user=\"\"} -8.0")
                .contains("kafka_server_quota_throttle_time{clientId=\"app\",resource=\"ControllerMutation\","
                        + "user=\"\"} 4000.0")
                .doesNotContain("clientId=\"other\"");
    }
}
