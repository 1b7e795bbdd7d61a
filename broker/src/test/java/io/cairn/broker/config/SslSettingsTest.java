package io.cairn.broker.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SslSettingsTest {

    private static Map<String, String> sslListener(Map<String, String> extra) {
        Map<String, String> props = new HashMap<>();
        props.put("listeners", "PLAINTEXT://:9092,SSL://:9093,CONTROLLER://:9094");
        props.put("controller.listener.names", "CONTROLLER");
        props.putAll(extra);
        return props;
    }

    @Test
    void shouldTakeKafkasDefaultsWhenOnlyTheKeystoreIsSet() {
        // When
        BrokerConfig config = BrokerConfig.fromMap(sslListener(Map.of("ssl.keystore.location", "/ks.jks",
                "ssl.keystore.password", "pw")));

        // Then
        SslSettings ssl = config.sslSettings("SSL");
        assertThat(ssl.keystoreType()).isEqualTo("JKS");
        assertThat(ssl.truststoreType()).isEqualTo("JKS");
        assertThat(ssl.protocol()).isEqualTo("TLSv1.3");
        assertThat(ssl.enabledProtocols()).containsExactly("TLSv1.2", "TLSv1.3");
        assertThat(ssl.cipherSuites()).isEmpty();
        assertThat(ssl.clientAuth()).isEqualTo(SslSettings.ClientAuth.NONE);
        assertThat(ssl.endpointIdentificationAlgorithm()).isEqualTo("https");
        assertThat(ssl.principalMappingRules()).isEqualTo("DEFAULT");
        assertThat(ssl.hasTruststore()).isFalse();
        assertThat(config.sslSettings("PLAINTEXT")).isNull();
        assertThat(config.interBrokerSsl()).isNull();
        assertThat(ssl.toString()).doesNotContain("pw");
    }

    @Test
    void shouldLetEachListenerPrefixedKeyWinOverItsGlobalKeyKeyByKey() {
        // Given: the prefix uses the listener name in lower case, as Kafka's ListenerName.configPrefix
        Map<String, String> props = new HashMap<>();
        props.put("listeners", "INTERNAL://:9093,EXTERNAL://:9094");
        props.put("listener.security.protocol.map", "INTERNAL:SSL,EXTERNAL:SSL");
        props.put("inter.broker.listener.name", "INTERNAL");
        props.put("ssl.keystore.location", "/global.p12");
        props.put("ssl.keystore.password", "global");
        props.put("ssl.keystore.type", "PKCS12");
        props.put("ssl.client.auth", "requested");
        props.put("listener.name.external.ssl.keystore.location", "/external.p12");
        props.put("listener.name.external.ssl.client.auth", "required");
        props.put("listener.name.internal.ssl.endpoint.identification.algorithm", "");

        // When
        BrokerConfig config = BrokerConfig.fromMap(props);

        // Then
        SslSettings external = config.sslSettings("EXTERNAL");
        assertThat(external.get(SslSettings.KEYSTORE_LOCATION)).isEqualTo("/external.p12");
        assertThat(external.keyOf(SslSettings.KEYSTORE_LOCATION))
                .isEqualTo("listener.name.external.ssl.keystore.location");
        assertThat(external.get(SslSettings.KEYSTORE_PASSWORD)).isEqualTo("global");
        assertThat(external.keyOf(SslSettings.KEYSTORE_PASSWORD)).isEqualTo("ssl.keystore.password");
        assertThat(external.keystoreType()).isEqualTo("PKCS12");
        assertThat(external.clientAuth()).isEqualTo(SslSettings.ClientAuth.REQUIRED);
        assertThat(external.endpointIdentificationAlgorithm()).isEqualTo("https");
        SslSettings internal = config.sslSettings("INTERNAL");
        assertThat(internal.get(SslSettings.KEYSTORE_LOCATION)).isEqualTo("/global.p12");
        assertThat(internal.clientAuth()).isEqualTo(SslSettings.ClientAuth.REQUESTED);
        assertThat(internal.endpointIdentificationAlgorithm()).isEmpty();
        assertThat(config.interBrokerSsl()).isSameAs(internal);
        assertThat(config.unknownKeys()).isEmpty();
        assertThat(config.notActedOnKeys()).isEmpty();
    }

    @Test
    void shouldRefuseAnSslListenerWithoutAKeystoreNamingTheKey() {
        assertThatThrownBy(() -> BrokerConfig.fromMap(sslListener(Map.of())))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("Invalid value null for configuration ssl.keystore.location: the SSL "
                        + "listener SSL needs a key store");
        assertThatThrownBy(() -> BrokerConfig.fromMap(sslListener(Map.of(
                "listener.name.ssl.ssl.keystore.location", "/ks.jks"))))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("configuration ssl.keystore.password:")
                .hasMessageContaining("listener.name.ssl.ssl.keystore.location");
    }

    @Test
    void shouldApplyKafkasRulesBetweenTheStoreKeys() {
        assertThatThrownBy(() -> BrokerConfig.fromMap(sslListener(Map.of("ssl.keystore.key", "k",
                "ssl.keystore.certificate.chain", "c"))))
                .hasMessageContaining("configuration ssl.keystore.type:")
                .hasMessageContaining("only for the PEM key store type");
        assertThatThrownBy(() -> BrokerConfig.fromMap(sslListener(Map.of("ssl.keystore.type", "PEM",
                "ssl.keystore.key", "k"))))
                .hasMessageContaining("configuration ssl.keystore.certificate.chain:");
        assertThatThrownBy(() -> BrokerConfig.fromMap(sslListener(Map.of("ssl.keystore.type", "PEM",
                "ssl.keystore.location", "/k.pem", "ssl.keystore.password", "secret"))))
                .hasMessageContaining("configuration ssl.keystore.password:")
                .hasMessageNotContaining("secret");
        assertThatThrownBy(() -> BrokerConfig.fromMap(sslListener(Map.of("ssl.keystore.location", "/ks.jks",
                "ssl.keystore.password", "pw", "ssl.truststore.type", "PEM", "ssl.truststore.password", "x"))))
                .hasMessageContaining("configuration ssl.truststore.password:");
        assertThatThrownBy(() -> BrokerConfig.fromMap(sslListener(Map.of("ssl.keystore.location", "/ks.jks",
                "ssl.keystore.password", "pw", "listener.name.ssl.ssl.client.auth", "always"))))
                .hasMessage("Invalid value always for configuration listener.name.ssl.ssl.client.auth: String must "
                        + "be one of: required, requested, none");
        assertThatThrownBy(() -> BrokerConfig.fromMap(sslListener(Map.of("ssl.keystore.location", "/ks.jks",
                "ssl.keystore.password", "pw", "ssl.engine.factory.class", "com.example.Factory"))))
                .hasMessageContaining("configuration ssl.engine.factory.class:");
    }

    @Test
    void shouldRefuseASaslSslListenerWithoutKeyStoreWithOneLine() {
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("listeners", "SASL_SSL://:9093")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("configuration ssl.keystore.location:")
                .hasMessageContaining("the SASL_SSL listener SASL_SSL needs a key store");
    }

    @Test
    void shouldResolveAnSslControllerListenerOnControllersAndBrokerOnlyNodes() {
        // When: a combined node and a broker-only node (whose listeners do not name the controller listener)
        BrokerConfig combined = BrokerConfig.fromMap(Map.of("listeners", "PLAINTEXT://:9092,CONTROLLER://:9093",
                "controller.listener.names", "CONTROLLER",
                "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:SSL",
                "ssl.keystore.location", "/ks.jks", "ssl.keystore.password", "pw",
                "listener.name.controller.ssl.client.auth", "required"));
        BrokerConfig brokerOnly = BrokerConfig.fromMap(Map.of("process.roles", "broker",
                "listeners", "PLAINTEXT://:9092", "controller.listener.names", "CONTROLLER",
                "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:SSL",
                "listener.name.controller.ssl.keystore.location", "/controller.p12",
                "listener.name.controller.ssl.keystore.password", "pw",
                "listener.name.controller.ssl.keystore.type", "PKCS12"));

        // Then: the listener-prefixed keys win over ssl.*, and ssl.client.auth is the controller listener's
        assertThat(combined.controllerSsl().listenerName()).isEqualTo("CONTROLLER");
        assertThat(combined.controllerSsl().clientAuth()).isEqualTo(SslSettings.ClientAuth.REQUIRED);
        assertThat(combined.controllerSsl().get(SslSettings.KEYSTORE_LOCATION)).isEqualTo("/ks.jks");
        assertThat(brokerOnly.controllerSsl().get(SslSettings.KEYSTORE_LOCATION)).isEqualTo("/controller.p12");
        assertThat(brokerOnly.controllerSsl().keystoreType()).isEqualTo("PKCS12");
        assertThat(brokerOnly.controllerSsl().clientAuth()).isEqualTo(SslSettings.ClientAuth.NONE);
        assertThat(BrokerConfig.fromMap(sslListener(Map.of("ssl.keystore.location", "/ks.jks",
                "ssl.keystore.password", "pw"))).controllerSsl()).as("a PLAINTEXT controller listener").isNull();
    }

    @Test
    void shouldRefuseWhatTheQuorumCannotServeOnTheControllerListenerWithOneLine() {
        // SASL: the quorum authenticates with PLAIN only (Kafka's default is GSSAPI; SCRAM lives in the metadata)
        String plain = "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"c\" "
                + "password=\"c-secret\" user_c=\"c-secret\";";
        for (String protocol : List.of("SASL_SSL", "SASL_PLAINTEXT")) {
            Map<String, String> sasl = Map.of("listeners", "PLAINTEXT://:9092,CONTROLLER://:9093",
                    "controller.listener.names", "CONTROLLER",
                    "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:" + protocol,
                    "ssl.keystore.location", "/ks.jks", "ssl.keystore.password", "pw",
                    "listener.name.controller.sasl.enabled.mechanisms", "PLAIN",
                    "listener.name.controller.plain.sasl.jaas.config", plain);
            assertThatThrownBy(() -> BrokerConfig.fromMap(sasl))
                    .isInstanceOf(ConfigException.class)
                    .hasMessageStartingWith("Invalid value GSSAPI for configuration sasl.mechanism.controller.protocol:")
                    .hasMessageContaining("authenticates with PLAIN only");
            Map<String, String> withPlain = new HashMap<>(sasl);
            withPlain.put("sasl.mechanism.controller.protocol", "PLAIN");
            ControllerSasl controller = BrokerConfig.fromMap(withPlain).controllerSasl();
            assertThat(controller.client().username()).isEqualTo("c");
            assertThat(controller.server().enabledMechanisms()).containsExactly("PLAIN");
            assertThat(controller.ssl() != null).isEqualTo(protocol.equals("SASL_SSL"));
            assertThat(controller.admits("User:anyone")).as("no authorizer: every authenticated principal").isTrue();
            withPlain.put("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
            withPlain.put("super.users", "User:c");
            ControllerSasl authorized = BrokerConfig.fromMap(withPlain).controllerSasl();
            assertThat(authorized.admits("User:c")).isTrue();
            assertThat(authorized.admits("User:anyone")).isFalse();
            withPlain.put("sasl.mechanism.controller.protocol", "SCRAM-SHA-256");
            assertThatThrownBy(() -> BrokerConfig.fromMap(withPlain)).isInstanceOf(ConfigException.class)
                    .hasMessageContaining("sasl.mechanism.controller.protocol");
        }
        // a broker-only node authenticates with the controller listener's login module, which it must have
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("process.roles", "broker",
                "listeners", "PLAINTEXT://:9092", "controller.listener.names", "CONTROLLER",
                "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:SASL_PLAINTEXT",
                "sasl.mechanism.controller.protocol", "PLAIN", "controller.quorum.voters", "1@localhost:9093")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("listener.name.controller.plain.sasl.jaas.config");
        // ssl.client.auth=requested: the gRPC server requires a certificate or asks for none
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("listeners", "PLAINTEXT://:9092,CONTROLLER://:9093",
                "controller.listener.names", "CONTROLLER",
                "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:SSL",
                "ssl.keystore.location", "/ks.jks", "ssl.keystore.password", "pw", "ssl.client.auth", "requested")))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("Invalid value requested for configuration ssl.client.auth:")
                .hasMessageContaining("listener.name.controller.ssl.client.auth to required (mutual TLS) or none");
        // a broker-only node serves its metadata listener over TLS too, so it needs a key store
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("process.roles", "broker",
                "listeners", "PLAINTEXT://:9092", "controller.listener.names", "CONTROLLER",
                "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:SSL",
                "ssl.truststore.location", "/ts.jks")))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("Invalid value null for configuration ssl.keystore.location:")
                .hasMessageContaining("the SSL controller listener CONTROLLER needs a key store on every node");
    }

    @Test
    void shouldResolveTheInterBrokerClientFromSecurityInterBrokerProtocol() {
        // When
        BrokerConfig config = BrokerConfig.fromMap(sslListener(Map.of("security.inter.broker.protocol", "SSL",
                "ssl.keystore.location", "/ks.jks", "ssl.keystore.password", "pw",
                "ssl.cipher.suites", "TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384")));

        // Then
        assertThat(config.replicaFetch().interBrokerListenerName()).isEqualTo("SSL");
        assertThat(config.interBrokerSsl().cipherSuites()).isEqualTo(List.of("TLS_AES_128_GCM_SHA256",
                "TLS_AES_256_GCM_SHA384"));
    }
}
