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
 * by Cairn or refused for a reason Cairn states: Kafka's tiered storage, which Cairn does not have, the two keys
 * naming kafka-clients plugin classes, which Cairn cannot load, the Kerberos and login-refresh {@code sasl.*} keys
 * (no GSSAPI, no expiring login) and a {@code sasl.jaas.config} without a mechanism, which a broker listener ignores.
 * None is refused as applied only at start. The unprefixed SASL keys are Kafka's per-broker keys: refused for the
 * cluster default with Kafka's message (after Kafka's check of the value).
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
            String value = key.defaultValue() != null && key.validate(key.defaultValue()).isEmpty()
                    ? key.defaultValue() : "x";
            Optional<DynamicBrokerConfigs.Refusal> refusal = DynamicBrokerConfigs.validate(
                    Map.of(name, value), true);
            refusal.filter(r -> !r.invalidRequest() || r.message().startsWith("Cairn"))
                    .ifPresent(r -> refusals.put(name, r.message()));
        }

        // Then: what is refused is refused for Cairn's stated reasons, none as "only at start"
        refusals.forEach((key, message) -> assertThat(message).as(key).doesNotContain("only at start"));
        assertThat(refusals.keySet()).allMatch(key -> key.startsWith("remote.") || key.startsWith("log.local.")
                || key.startsWith("sasl.") || List.of("metric.reporters", "principal.builder.class").contains(key));
        assertThat(refusals).containsKeys("metric.reporters", "remote.log.reader.threads");
    }

    @Test
    void theUnprefixedSaslKeysArePerBrokerLiveOrRefusedForTheirReason() {
        // Given: each of Kafka's unprefixed SASL keys of DynamicListenerConfig, with a value its rule accepts
        Map<String, String> values = new TreeMap<>(Map.ofEntries(Map.entry("sasl.enabled.mechanisms", "PLAIN"),
                Map.entry("sasl.mechanism.inter.broker.protocol", "PLAIN"),
                Map.entry("sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required;"),
                Map.entry("sasl.kerberos.service.name", "kafka"), Map.entry("sasl.kerberos.kinit.cmd", "/bin/kinit"),
                Map.entry("sasl.kerberos.ticket.renew.window.factor", "0.9"),
                Map.entry("sasl.kerberos.ticket.renew.jitter", "0.1"),
                Map.entry("sasl.kerberos.min.time.before.relogin", "1000"),
                Map.entry("sasl.kerberos.principal.to.local.rules", "DEFAULT"),
                Map.entry("sasl.login.refresh.window.factor", "0.9"),
                Map.entry("sasl.login.refresh.window.jitter", "0.1"),
                Map.entry("sasl.login.refresh.min.period.seconds", "30"),
                Map.entry("sasl.login.refresh.buffer.seconds", "60")));

        for (Map.Entry<String, String> e : values.entrySet()) {
            // When
            Optional<DynamicBrokerConfigs.Refusal> clusterWide = DynamicBrokerConfigs.validate(
                    Map.of(e.getKey(), e.getValue()), false);
            Optional<DynamicBrokerConfigs.Refusal> perBroker = DynamicBrokerConfigs.validate(
                    Map.of(e.getKey(), e.getValue()), true);

            // Then: the cluster default is Kafka's refusal; per broker, live or refused for Cairn's reason
            assertThat(clusterWide).as(e.getKey()).contains(new DynamicBrokerConfigs.Refusal(true, "Cannot update "
                    + "these configs at default cluster level, broker id must be specified: Set(" + e.getKey() + ")"));
            if (DynamicSaslSettings.UNPREFIXED_KEYS.contains(e.getKey())) {
                assertThat(perBroker).as(e.getKey()).isEmpty();
                assertThat(DynamicBrokerConfigs.isLive(e.getKey())).isTrue();
            } else if (e.getKey().equals("sasl.jaas.config")) {
                assertThat(perBroker).as(e.getKey()).hasValueSatisfying(r -> {
                    assertThat(r.invalidRequest()).isFalse();
                    assertThat(r.message()).startsWith("A broker listener ignores a sasl.jaas.config without a "
                            + "mechanism prefix").endsWith(": Set(sasl.jaas.config)");
                });
            } else {
                assertThat(perBroker).as(e.getKey()).hasValueSatisfying(r -> {
                    assertThat(r.invalidRequest()).isFalse();
                    assertThat(r.message()).startsWith("Cairn has no GSSAPI (Kerberos)")
                            .endsWith(": Set(" + e.getKey() + ")");
                });
            }
        }
        assertThat(DynamicBrokerConfigs.validate(Map.of("listener.name.sasl_ssl.sasl.kerberos.service.name",
                "kafka"), true)).hasValueSatisfying(r -> assertThat(r.message()).startsWith("Cairn has no GSSAPI"));
    }

    @Test
    void aBadValueIsRefusedWithKafkasTextBeforeThePerBrokerCheck() {
        // Then: Kafka's validateConfigTypes comes before its per-broker check
        assertThat(DynamicBrokerConfigs.validate(Map.of("sasl.login.refresh.window.factor", "abc"), false))
                .hasValueSatisfying(r -> {
                    assertThat(r.invalidRequest()).isTrue();
                    assertThat(r.message()).isEqualTo("Invalid value abc for configuration "
                            + "sasl.login.refresh.window.factor: Not a number of type DOUBLE");
                });
    }
}
