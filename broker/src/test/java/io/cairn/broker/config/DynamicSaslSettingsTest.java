package io.cairn.broker.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A SASL listener's mechanisms and JAAS users changed by this broker's dynamic configs, checked before forwarding. */
class DynamicSaslSettingsTest {

    private static final String PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule required ";
    private static final String JAAS_KEY = "listener.name.sasl_plaintext.plain.sasl.jaas.config";
    private static final Map<String, String> STATIC = Map.of(
            "listeners", "PLAINTEXT://:9092,SASL_PLAINTEXT://:9094",
            "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
            "sasl.enabled.mechanisms", "PLAIN",
            JAAS_KEY, PLAIN + "user_alice=\"alice-secret\";");

    private final Map<String, SaslSettings> served = new LinkedHashMap<>(Map.of("SASL_PLAINTEXT",
            SaslSettings.forListener(STATIC, "SASL_PLAINTEXT")));
    private final DynamicSaslSettings sasl = new DynamicSaslSettings(1, STATIC,
            () -> new DynamicSaslSettings.Listeners() {
                @Override
                public Map<String, SaslSettings> saslSettings() {
                    return Map.copyOf(served);
                }

                @Override
                public void replaceSasl(String listenerName, SaslSettings next) {
                    served.put(listenerName, next);
                }
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
}
