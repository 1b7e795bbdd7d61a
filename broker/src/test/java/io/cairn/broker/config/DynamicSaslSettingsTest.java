package io.cairn.broker.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * A SASL listener's mechanisms and JAAS users changed by this broker's dynamic configs (its own keys and the unprefixed
 * {@code sasl.enabled.mechanisms}), and the inter-broker clients' mechanism, checked before forwarding.
 */
class DynamicSaslSettingsTest {

    private static final String PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule required ";
    private static final String SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule required;";
    private static final String JAAS_KEY = "listener.name.sasl_plaintext.plain.sasl.jaas.config";
    private static final Map<String, String> STATIC = Map.of(
            "listeners", "PLAINTEXT://:9092,SASL_PLAINTEXT://:9094",
            "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
            "sasl.enabled.mechanisms", "PLAIN",
            JAAS_KEY, PLAIN + "user_alice=\"alice-secret\";");

    private final Map<String, SaslSettings> served = new LinkedHashMap<>(Map.of("SASL_PLAINTEXT",
            SaslSettings.forListener(STATIC, "SASL_PLAINTEXT")));
    private final DynamicSaslSettings sasl = new DynamicSaslSettings(1, STATIC, () -> listenersOf(served),
            "PLAINTEXT", credentials -> {
                throw new AssertionError("the inter-broker listener is PLAINTEXT");
            });

    private static MetadataImage image(Map<String, String> broker1) {
        return new MetadataImage(1L, "c", 1, 1L, Map.of(), Map.of(), Map.of(),
                Map.of(ConfigResource.broker("1"), broker1), 0L, 0L, Map.of(), Map.of(), Map.of());
    }

    @Test
    void aNewJaasConfigGivesTheListenersNextConnectionsItsUsers() {
        // When: bob is added to the listener's PLAIN login module, then the dynamic value is deleted
        sasl.apply(image(Map.of(JAAS_KEY, PLAIN + "user_alice=\"alice-secret\" user_bob=\"bob-secret\";")));
        SaslSettings withBob = served.get("SASL_PLAINTEXT");
        sasl.apply(image(Map.of()));

        // Then
        assertThat(withBob.jaasOf("PLAIN").option("user_bob")).isEqualTo("bob-secret");
        assertThat(served.get("SASL_PLAINTEXT")).isEqualTo(SaslSettings.forListener(STATIC, "SASL_PLAINTEXT"));
        assertThat(served.get("SASL_PLAINTEXT").jaasOf("PLAIN").option("user_bob")).isNull();
    }

    @Test
    void settingsTheListenerCannotUseAreRefusedBeforeForwardingAndNotApplied() {
        // Given
        Map<String, String> gssapi = Map.of("listener.name.sasl_plaintext.sasl.enabled.mechanisms", "GSSAPI");

        // Then
        assertThat(sasl.validate("1", gssapi, image(Map.of()))).hasValueSatisfying(refusal -> assertThat(refusal)
                .startsWith("Invalid value org.apache.kafka.common.config.ConfigException: Invalid value GSSAPI for "
                        + "configuration listener.name.sasl_plaintext.sasl.enabled.mechanisms: the SASL listener "
                        + "SASL_PLAINTEXT enables GSSAPI, which Cairn does not support (Kerberos is not implemented)")
                .endsWith(" for configuration Invalid dynamic configuration"));
        assertThat(sasl.validate("1", Map.of("listener.name.sasl_plaintext.sasl.enabled.mechanisms",
                "PLAIN,SCRAM-SHA-256"), image(Map.of()))).isPresent();
        assertThat(sasl.validate("1", Map.of(JAAS_KEY, PLAIN + "user_carol=\"c\";"), image(Map.of()))).isEmpty();

        // When: committed anyway (another broker's answer)
        sasl.apply(image(gssapi));

        // Then
        assertThat(served.get("SASL_PLAINTEXT").enabledMechanisms()).containsExactly("PLAIN");
    }

    @Test
    void theListenerKeysAreTheMechanismsJaasReceiveSizeAndReauthentication() {
        // Then
        assertThat(SaslSettings.isListenerKey("listener.name.sasl_ssl.sasl.enabled.mechanisms")).isTrue();
        assertThat(SaslSettings.isListenerKey("listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config")).isTrue();
        assertThat(SaslSettings.isListenerKey("listener.name.sasl_ssl.sasl.server.max.receive.size")).isTrue();
        assertThat(SaslSettings.isListenerKey("listener.name.sasl_ssl.plain.connections.max.reauth.ms")).isTrue();
        assertThat(SaslSettings.isListenerKey("listener.name.sasl_ssl.connections.max.reauth.ms")).isTrue();
        assertThat(SaslSettings.isListenerKey("sasl.enabled.mechanisms")).isFalse();
        assertThat(SaslSettings.isListenerKey("listener.name.sasl_ssl.sasl.kerberos.service.name")).isFalse();
        assertThat(SaslSettings.isListenerKey("listener.name.sasl_ssl.ssl.keystore.location")).isFalse();
    }

    @Test
    void theUnprefixedMechanismsReachTheListenersWithoutTheirOwnUntilDeleted() {
        // Given: SASL_SSL enables its own mechanisms, SASL_PLAINTEXT the unprefixed ones
        Map<String, String> props = new HashMap<>(STATIC);
        props.put("listeners", "PLAINTEXT://:9092,SASL_PLAINTEXT://:9094,SASL_SSL://:9095");
        props.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,"
                + "SASL_SSL:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT");
        props.put("listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config", SCRAM);
        props.put("listener.name.sasl_ssl.sasl.enabled.mechanisms", "PLAIN");
        props.put("listener.name.sasl_ssl.plain.sasl.jaas.config", PLAIN + "user_alice=\"alice-secret\";");
        Map<String, SaslSettings> listeners = new LinkedHashMap<>();
        listeners.put("SASL_PLAINTEXT", SaslSettings.forListener(props, "SASL_PLAINTEXT"));
        listeners.put("SASL_SSL", SaslSettings.forListener(props, "SASL_SSL"));
        DynamicSaslSettings dynamic = new DynamicSaslSettings(1, props, () -> listenersOf(listeners), "PLAINTEXT",
                credentials -> {
                });
        Map<String, String> scram = Map.of("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256");

        // When
        Optional<String> checked = dynamic.validate("1", scram, image(Map.of()));
        dynamic.apply(image(scram));
        SaslSettings plaintextWithScram = listeners.get("SASL_PLAINTEXT");
        SaslSettings sslWithScram = listeners.get("SASL_SSL");
        dynamic.apply(image(Map.of()));

        // Then: accepted and taken by SASL_PLAINTEXT's next connections, not by SASL_SSL, until deleted
        assertThat(checked).isEmpty();
        assertThat(plaintextWithScram.enabledMechanisms()).containsExactly("PLAIN", "SCRAM-SHA-256");
        assertThat(sslWithScram.enabledMechanisms()).containsExactly("PLAIN");
        assertThat(listeners.get("SASL_PLAINTEXT").enabledMechanisms()).containsExactly("PLAIN");
        assertThat(DynamicSaslSettings.isKey("sasl.enabled.mechanisms")).isTrue();
        assertThat(DynamicSaslSettings.isKey("sasl.mechanism.inter.broker.protocol")).isTrue();
        assertThat(DynamicSaslSettings.isKey("sasl.jaas.config")).isFalse();
    }

    @Test
    void anUnprefixedMechanismTheListenerCannotServeIsRefused() {
        // Then: SCRAM-SHA-512 has no login module on SASL_PLAINTEXT; GSSAPI is not served
        assertThat(sasl.validate("1", Map.of("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-512"), image(Map.of())))
                .hasValueSatisfying(refusal -> assertThat(refusal).contains("has no JAAS login module for it: set "
                        + "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config"));
        assertThat(sasl.validate("1", Map.of("sasl.enabled.mechanisms", "GSSAPI"), image(Map.of())))
                .hasValueSatisfying(refusal -> assertThat(refusal).contains("Invalid value GSSAPI for configuration "
                        + "sasl.enabled.mechanisms: the SASL listener SASL_PLAINTEXT enables GSSAPI, which Cairn does "
                        + "not support"));
    }

    @Test
    void theInterBrokerMechanismChangesTheClientsNextConnectionsWhenTheListenerEnablesIt() {
        // Given: the inter-broker listener INTERNAL enables PLAIN, with a SCRAM login module ready
        Map<String, String> props = new HashMap<>(Map.of(
                "listeners", "PLAINTEXT://:9092,INTERNAL://:9094",
                "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,INTERNAL:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
                "inter.broker.listener.name", "INTERNAL",
                "sasl.mechanism.inter.broker.protocol", "PLAIN",
                "listener.name.internal.sasl.enabled.mechanisms", "PLAIN",
                "listener.name.internal.plain.sasl.jaas.config", PLAIN
                        + "username=\"broker\" password=\"broker-secret\" user_broker=\"broker-secret\";",
                "listener.name.internal.scram-sha-256.sasl.jaas.config", SCRAM.replace("required;",
                        "required username=\"broker\" password=\"scram-secret\";")));
        Map<String, SaslSettings> listeners = new LinkedHashMap<>();
        listeners.put("INTERNAL", SaslSettings.forListener(props, "INTERNAL"));
        List<SaslSettings.ClientCredentials> clients = new ArrayList<>();
        DynamicSaslSettings dynamic = new DynamicSaslSettings(1, props, () -> listenersOf(listeners), "INTERNAL",
                clients::add);
        String required = "requirement failed: sasl.mechanism.inter.broker.protocol must be included in "
                + "sasl.enabled.mechanisms when SASL is used for inter-broker communication";
        Map<String, String> scram = Map.of("sasl.mechanism.inter.broker.protocol", "SCRAM-SHA-256",
                "listener.name.internal.sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256");

        // Then: Kafka's requirement, whichever key leaves the mechanism out
        assertThat(dynamic.validate("1", Map.of("sasl.mechanism.inter.broker.protocol", "SCRAM-SHA-256"),
                image(Map.of()))).contains(required);
        assertThat(dynamic.validate("1", Map.of("listener.name.internal.sasl.enabled.mechanisms", "SCRAM-SHA-256"),
                image(Map.of()))).contains(required);
        assertThat(dynamic.validate("1", scram, image(Map.of()))).isEmpty();

        // When
        dynamic.apply(image(scram));

        // Then: the clients' next connections use SCRAM-SHA-256 as the broker's user of its login module
        assertThat(listeners.get("INTERNAL").enabledMechanisms()).containsExactly("PLAIN", "SCRAM-SHA-256");
        assertThat(clients).last().satisfies(client -> {
            assertThat(client.mechanism()).isEqualTo("SCRAM-SHA-256");
            assertThat(client.username()).isEqualTo("broker");
            assertThat(client.password()).isEqualTo("scram-secret");
        });

        // When: deleted again
        dynamic.apply(image(Map.of()));

        // Then
        assertThat(clients).last().satisfies(client -> assertThat(client.mechanism()).isEqualTo("PLAIN"));
    }

    private static DynamicSaslSettings.Listeners listenersOf(Map<String, SaslSettings> listeners) {
        return new DynamicSaslSettings.Listeners() {
            @Override
            public Map<String, SaslSettings> saslSettings() {
                return Map.copyOf(listeners);
            }

            @Override
            public void replaceSasl(String listenerName, SaslSettings next) {
                listeners.put(listenerName, next);
            }
        };
    }
}
