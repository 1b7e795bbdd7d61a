package io.cairn.broker.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Kafka's SASL listener keys, resolved per listener. */
class SaslSettingsTest {

    private static final String JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule required "
            + "user_alice=\"alice-secret\";";

    private static Map<String, String> saslListener(Map<String, String> extra) {
        Map<String, String> props = new HashMap<>();
        props.put("listeners", "PLAINTEXT://:9092,SASL_PLAINTEXT://:9094");
        props.putAll(extra);
        return props;
    }

    @Test
    void resolvesMechanismsJaasAndBoundsWithKafkaDefaults() {
        // When
        BrokerConfig config = BrokerConfig.fromMap(saslListener(Map.of("sasl.enabled.mechanisms", "PLAIN",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config", JAAS)));

        // Then
        SaslSettings sasl = config.saslSettings("SASL_PLAINTEXT");
        assertThat(sasl.enabledMechanisms()).containsExactly("PLAIN");
        assertThat(sasl.jaasOf("PLAIN").option("user_alice")).isEqualTo("alice-secret");
        assertThat(sasl.maxReceiveSize()).isEqualTo(524288);
        assertThat(sasl.failedAuthenticationDelayMs()).isEqualTo(100);
        assertThat(sasl.toString()).doesNotContain("alice-secret");
        assertThat(config.saslSettings("PLAINTEXT")).isNull();
        assertThat(config.unknownKeys()).isEmpty();
        assertThat(config.notActedOnKeys()).isEmpty();
    }

    @Test
    void connectionsMaxReauthMsResolvesPerListenerAndMechanismAsKafkaDoes() {
        // When: a mechanism-and-listener key, a listener key and the broker key
        String scram = "org.apache.kafka.common.security.scram.ScramLoginModule required;";
        Map<String, String> props = new HashMap<>(Map.of(
                "sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config", JAAS,
                "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config", scram,
                "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config", scram,
                "connections.max.reauth.ms", "60000",
                "listener.name.sasl_plaintext.scram-sha-512.connections.max.reauth.ms", "2000"));
        BrokerConfig config = BrokerConfig.fromMap(saslListener(props));
        props.put("listener.name.sasl_plaintext.connections.max.reauth.ms", "5000");
        BrokerConfig listenerWide = BrokerConfig.fromMap(saslListener(props));

        // Then
        SaslSettings sasl = config.saslSettings("SASL_PLAINTEXT");
        assertThat(sasl.maxReauthMs("PLAIN")).isEqualTo(60000);
        assertThat(sasl.maxReauthMs("SCRAM-SHA-256")).isEqualTo(60000);
        assertThat(sasl.maxReauthMs("SCRAM-SHA-512")).isEqualTo(2000);
        assertThat(listenerWide.saslSettings("SASL_PLAINTEXT").maxReauthMs("PLAIN")).isEqualTo(5000);
        assertThat(listenerWide.saslSettings("SASL_PLAINTEXT").maxReauthMs("SCRAM-SHA-512")).isEqualTo(2000);
        assertThat(config.unknownKeys()).isEmpty();
        assertThat(config.notActedOnKeys()).doesNotContain("connections.max.reauth.ms");
    }

    @Test
    void connectionsMaxReauthMsDefaultsToZeroAndANegativeValueDisablesIt() {
        // When
        BrokerConfig defaults = BrokerConfig.fromMap(saslListener(Map.of("sasl.enabled.mechanisms", "PLAIN",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config", JAAS)));
        BrokerConfig negative = BrokerConfig.fromMap(saslListener(Map.of("sasl.enabled.mechanisms", "PLAIN",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config", JAAS, "connections.max.reauth.ms", "-1")));

        // Then
        assertThat(defaults.saslSettings("SASL_PLAINTEXT").maxReauthMs("PLAIN")).isZero();
        assertThat(negative.saslSettings("SASL_PLAINTEXT").maxReauthMs("PLAIN")).isZero();
        assertThatThrownBy(() -> BrokerConfig.fromMap(saslListener(Map.of("sasl.enabled.mechanisms", "PLAIN",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config", JAAS,
                "listener.name.sasl_plaintext.plain.connections.max.reauth.ms", "soon"))))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("listener.name.sasl_plaintext.plain.connections.max.reauth.ms");
    }

    @Test
    void aListenerPrefixedMechanismListWins() {
        // When
        BrokerConfig config = BrokerConfig.fromMap(saslListener(Map.of("sasl.enabled.mechanisms", "GSSAPI",
                "listener.name.sasl_plaintext.sasl.enabled.mechanisms", "PLAIN",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config", JAAS,
                "sasl.server.max.receive.size", "1000", "connection.failed.authentication.delay.ms", "0")));

        // Then
        assertThat(config.saslSettings("SASL_PLAINTEXT").enabledMechanisms()).containsExactly("PLAIN");
        assertThat(config.saslSettings("SASL_PLAINTEXT").maxReceiveSize()).isEqualTo(1000);
        assertThat(config.saslSettings("SASL_PLAINTEXT").failedAuthenticationDelayMs()).isZero();
    }

    @Test
    void refusesGssapiWhichIsKafkaDefaultWithOneLine() {
        assertThatThrownBy(() -> BrokerConfig.fromMap(saslListener(Map.of())))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("configuration sasl.enabled.mechanisms:")
                .hasMessageContaining("enables GSSAPI, which Cairn does not support (Kerberos is not implemented)");
    }

    @Test
    void refusesAMechanismWithoutJaasConfigAndIgnoresABareSaslJaasConfigAsKafkaDoes() {
        assertThatThrownBy(() -> BrokerConfig.fromMap(saslListener(Map.of("sasl.enabled.mechanisms", "PLAIN",
                "sasl.jaas.config", JAAS))))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("configuration listener.name.sasl_plaintext.plain.sasl.jaas.config:")
                .hasMessageContaining("ignores an unprefixed sasl.jaas.config");
        assertThatThrownBy(() -> BrokerConfig.fromMap(saslListener(Map.of("sasl.enabled.mechanisms", "PLAIN",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config", "x.M required user_a=\"b\""))))
                .hasMessageContaining("must end with ';'")
                .hasMessageNotContaining("user_a");
    }

    @Test
    void theInterBrokerClientTakesTheMechanismAndTheListenersJaasUsernameAndPassword() {
        // When
        BrokerConfig config = BrokerConfig.fromMap(saslListener(Map.of("sasl.enabled.mechanisms", "PLAIN",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config", "org.apache.kafka.common.security.plain."
                        + "PlainLoginModule required username=\"admin\" password=\"admin-secret\" "
                        + "user_admin=\"admin-secret\";",
                "security.inter.broker.protocol", "SASL_PLAINTEXT", "sasl.mechanism.inter.broker.protocol", "PLAIN")));

        // Then
        SaslSettings.ClientCredentials client = config.interBrokerSasl();
        assertThat(client.mechanism()).isEqualTo("PLAIN");
        assertThat(client.username()).isEqualTo("admin");
        assertThat(client.password()).isEqualTo("admin-secret");
        assertThat(client.toString()).doesNotContain("admin-secret");
    }

    @Test
    void refusesAnInterBrokerMechanismTheListenerDoesNotEnableOrAJaasWithoutTheBrokersCredentials() {
        assertThatThrownBy(() -> BrokerConfig.fromMap(saslListener(Map.of("sasl.enabled.mechanisms", "PLAIN",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config", JAAS,
                "security.inter.broker.protocol", "SASL_PLAINTEXT"))))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("configuration sasl.mechanism.inter.broker.protocol:")
                .hasMessageContaining("must be included in sasl.enabled.mechanisms");
        assertThatThrownBy(() -> BrokerConfig.fromMap(saslListener(Map.of("sasl.enabled.mechanisms", "PLAIN",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config", JAAS,
                "security.inter.broker.protocol", "SASL_PLAINTEXT", "sasl.mechanism.inter.broker.protocol", "PLAIN"))))
                .hasMessageContaining("needs the broker's own username and password");
    }

    @Test
    void scramMechanismsAreServedWithTheirScramLoginModuleAndCanBeTheInterBrokerMechanism() {
        // Given
        String scram = "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"admin\" "
                + "password=\"admin-secret\";";

        // When
        BrokerConfig config = BrokerConfig.fromMap(saslListener(Map.of(
                "listener.name.sasl_plaintext.sasl.enabled.mechanisms", "SCRAM-SHA-256,SCRAM-SHA-512,PLAIN",
                "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config", scram,
                "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config", scram,
                "listener.name.sasl_plaintext.plain.sasl.jaas.config", JAAS,
                "security.inter.broker.protocol", "SASL_PLAINTEXT",
                "sasl.mechanism.inter.broker.protocol", "SCRAM-SHA-256")));

        // Then
        assertThat(config.saslSettings("SASL_PLAINTEXT").enabledMechanisms())
                .containsExactly("SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN");
        assertThat(config.interBrokerSasl().mechanism()).isEqualTo("SCRAM-SHA-256");
        assertThat(config.interBrokerSasl().username()).isEqualTo("admin");
    }

    @Test
    void scramWithoutItsLoginModuleIsRefusedAsKafkaRefusesIt() {
        assertThatThrownBy(() -> BrokerConfig.fromMap(saslListener(Map.of("sasl.enabled.mechanisms",
                "SCRAM-SHA-256"))))
                .hasMessageContaining("enables SCRAM-SHA-256 but has no JAAS login module for it: set "
                        + "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config");
    }

    private static final String OAUTH_JAAS = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule "
            + "required unsecuredValidatorRequiredScope=\"kafka  admin\" "
            + "unsecuredValidatorAllowableClockSkewMs=\"250\";";

    private static Map<String, String> oauth(Map<String, String> extra) {
        Map<String, String> props = new HashMap<>(Map.of("sasl.enabled.mechanisms", "OAUTHBEARER",
                "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config", OAUTH_JAAS));
        props.putAll(extra);
        return saslListener(props);
    }

    @Test
    void oauthbearerWithoutANamedValidatorIsRefusedThoughKafkaWouldFallBackToUnsignedTokens() {
        assertThatThrownBy(() -> BrokerConfig.fromMap(oauth(Map.of())))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("configuration listener.name.sasl_plaintext.oauthbearer.sasl.server.callback"
                        + ".handler.class:")
                .hasMessageContaining(OAuthBearerSettings.VALIDATOR_HANDLER)
                .hasMessageContaining("OAuthBearerUnsecuredValidatorCallbackHandler")
                .hasMessageContaining("sasl.oauthbearer.jwks.endpoint.url");
        assertThatThrownBy(() -> BrokerConfig.fromMap(oauth(Map.of(
                "listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class", "com.example.Mine"))))
                .hasMessageContaining("no custom classes");
    }

    @Test
    void theUnsecuredValidatorTakesItsOptionsFromTheJaasConfig() {
        BrokerConfig config = BrokerConfig.fromMap(oauth(Map.of(
                "listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class",
                OAuthBearerSettings.UNSECURED_VALIDATOR_HANDLER)));
        assertThat(config.saslSettings("SASL_PLAINTEXT").oauthBearer()).isEqualTo(
                new OAuthBearerSettings.Unsecured("sub", "scope", List.of("kafka", "admin"), 250));
        assertThat(config.notActedOnKeys()).isEmpty();
    }

    @Test
    void theSecuredValidatorReadsKafkasKeysWithListenerOverrides() {
        // When
        BrokerConfig config = BrokerConfig.fromMap(oauth(Map.of(
                "listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class",
                OAuthBearerSettings.VALIDATOR_HANDLER,
                "sasl.oauthbearer.jwks.endpoint.url", "https://idp.example/jwks",
                "listener.name.sasl_plaintext.sasl.oauthbearer.expected.audience", "kafka, cairn",
                "sasl.oauthbearer.expected.issuer", "https://idp.example",
                "sasl.oauthbearer.sub.claim.name", "client_id",
                "sasl.oauthbearer.clock.skew.seconds", "5")));

        // Then
        assertThat(config.saslSettings("SASL_PLAINTEXT").oauthBearer()).isEqualTo(new OAuthBearerSettings.Secured(
                java.net.URI.create("https://idp.example/jwks"), 3_600_000L, 100L, 10_000L, List.of("kafka", "cairn"),
                "https://idp.example", "scope", "client_id", 5));
        assertThat(config.notActedOnKeys()).isEmpty();
        assertThat(config.unknownKeys()).isEmpty();
    }

    @Test
    void theJwtValidatorClassMayNameKafkasDefaultOrBrokerValidatorOnly() {
        String handler = "listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class";
        Map<String, String> secured = Map.of(handler, OAuthBearerSettings.VALIDATOR_HANDLER,
                "sasl.oauthbearer.jwks.endpoint.url", "file:/etc/jwks.json");
        for (String accepted : List.of(OAuthBearerSettings.DEFAULT_JWT_VALIDATOR,
                OAuthBearerSettings.BROKER_JWT_VALIDATOR)) {
            Map<String, String> props = new HashMap<>(secured);
            props.put("sasl.oauthbearer.jwt.validator.class", accepted);
            assertThat(BrokerConfig.fromMap(oauth(props)).saslSettings("SASL_PLAINTEXT").oauthBearer())
                    .isInstanceOf(OAuthBearerSettings.Secured.class);
        }
        Map<String, String> client = new HashMap<>(secured);
        client.put("sasl.oauthbearer.jwt.validator.class",
                "org.apache.kafka.common.security.oauthbearer.ClientJwtValidator");
        assertThatThrownBy(() -> BrokerConfig.fromMap(oauth(client)))
                .hasMessageContaining("configuration sasl.oauthbearer.jwt.validator.class:")
                .hasMessageContaining("checks no signature");
    }

    @Test
    void theSecuredValidatorNeedsAJwksUrl() {
        String handler = "listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class";
        assertThatThrownBy(() -> BrokerConfig.fromMap(oauth(Map.of(handler, OAuthBearerSettings.VALIDATOR_HANDLER))))
                .hasMessageContaining("configuration sasl.oauthbearer.jwks.endpoint.url: must be set");
        assertThatThrownBy(() -> BrokerConfig.fromMap(oauth(Map.of(handler, OAuthBearerSettings.VALIDATOR_HANDLER,
                "sasl.oauthbearer.jwks.endpoint.url", "ftp://idp/jwks"))))
                .hasMessageContaining("must be an http, https or file URL");
        for (String relative : List.of("file:jwks.json", "file://host/jwks.json")) {
            assertThatThrownBy(() -> BrokerConfig.fromMap(oauth(Map.of(handler,
                    OAuthBearerSettings.VALIDATOR_HANDLER, "sasl.oauthbearer.jwks.endpoint.url", relative))))
                    .hasMessageContaining("a file URL needs an absolute path");
        }
    }

    @Test
    void oauthbearerBetweenBrokersIsRefused() {
        assertThatThrownBy(() -> BrokerConfig.fromMap(oauth(Map.of(
                "listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class",
                OAuthBearerSettings.UNSECURED_VALIDATOR_HANDLER,
                "security.inter.broker.protocol", "SASL_PLAINTEXT",
                "sasl.mechanism.inter.broker.protocol", "OAUTHBEARER"))))
                .hasMessageContaining("configuration sasl.mechanism.inter.broker.protocol:")
                .hasMessageContaining("cannot authenticate to each other with it");
    }
}
