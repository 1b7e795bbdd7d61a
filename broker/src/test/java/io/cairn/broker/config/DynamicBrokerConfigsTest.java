package io.cairn.broker.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.config.ConfigKey;
import io.cairn.metadata.config.ConfigTable;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Every broker key Kafka 4.1.1 lets change at run time (the dynamic rows of the config table) is either applied live
 * by Cairn or refused for a reason Cairn states: Kafka's tiered storage, which Cairn does not have, and the two keys
 * naming kafka-clients plugin classes, which Cairn cannot load. Only the unprefixed {@code sasl.*} keys (a listener's
 * prefixed ones are live) are still refused as applied only at start.
 */
class DynamicBrokerConfigsTest {

    @Test
    void everyDynamicKeyOfKafkaIsLiveOrRefusedForAStatedReason() {
        // Given: each dynamic broker key of the table, with its default (or a value its rule accepts)
        Map<String, String> refusals = new TreeMap<>();
        for (ConfigKey key : ConfigTable.get().brokerKeys()) {
            if (!key.dynamic()) {
                continue;
            }
            // When: set per broker, as a listener's key where Kafka allows it only with a listener prefix
            String name = DynamicBrokerConfigs.isLive(key.name()) || !key.name().startsWith("ssl.")
                    ? key.name() : "listener.name.internal." + key.name();
            Optional<DynamicBrokerConfigs.Refusal> refusal = DynamicBrokerConfigs.validate(
                    Map.of(name, "x"), true);
            refusal.filter(r -> !r.invalidRequest() || r.message().startsWith("Cairn"))
                    .ifPresent(r -> refusals.put(name, r.message()));
        }

        // Then: what is refused is refused for Cairn's stated reasons; only unprefixed sasl.* keys as "only at start"
        refusals.forEach((key, message) -> assertThat(!message.contains("only at start") || key.startsWith("sasl."))
                .as("%s: %s", key, message).isTrue());
        assertThat(refusals.keySet()).allMatch(key -> key.startsWith("remote.") || key.startsWith("log.local.")
                || key.startsWith("sasl.") || List.of("metric.reporters", "principal.builder.class").contains(key));
        assertThat(refusals).containsKeys("metric.reporters", "remote.log.reader.threads");
    }
}
