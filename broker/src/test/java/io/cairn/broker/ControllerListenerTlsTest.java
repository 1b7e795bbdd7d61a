package io.cairn.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.broker.config.BrokerConfig;
import io.cairn.broker.config.ConfigException;
import io.cairn.broker.config.SslSettings;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ControllerListenerTlsTest {

    private static SslSettings controllerSsl(Map<String, String> extra) {
        Map<String, String> props = new HashMap<>(Map.of("listeners", "PLAINTEXT://:9092,CONTROLLER://:9093",
                "controller.listener.names", "CONTROLLER",
                "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:SSL",
                "ssl.keystore.location", "/ks.jks", "ssl.keystore.password", "pw"));
        props.putAll(extra);
        return BrokerConfig.fromMap(props).controllerSsl();
    }

    @Test
    void kafkasDefaultsLeaveNothingUnacted() {
        assertThat(ControllerListenerTls.notActedOn(controllerSsl(Map.of()))).isEmpty();
        assertThat(ControllerListenerTls.notActedOn(controllerSsl(Map.of("ssl.enabled.protocols", "TLSv1.3,TLSv1.2",
                "ssl.endpoint.identification.algorithm", "", "ssl.client.auth", "required")))).isEmpty();
    }

    @Test
    void engineKeysTheGrpcTlsCannotApplyAreNamedAsTheUserWroteThem() {
        // When
        SslSettings settings = controllerSsl(Map.of("listener.name.controller.ssl.enabled.protocols", "TLSv1.3",
                "ssl.cipher.suites", "TLS_AES_128_GCM_SHA256", "ssl.protocol", "TLSv1.2",
                "ssl.principal.mapping.rules", "RULE:^CN=(.*?),.*$/$1/,DEFAULT"));

        // Then
        assertThat(ControllerListenerTls.notActedOn(settings)).containsExactly("ssl.protocol=TLSv1.2",
                "listener.name.controller.ssl.enabled.protocols=TLSv1.3", "ssl.cipher.suites=TLS_AES_128_GCM_SHA256",
                "ssl.principal.mapping.rules (no principal is derived on the quorum's links)");
    }

    @Test
    void aKeyStoreThatCannotBeLoadedFailsStartupNamingItsKey() {
        // Given
        BrokerConfig config = BrokerConfig.fromMap(Map.of("node.id", "1", "process.roles", "broker,controller",
                "listeners", "PLAINTEXT://:9092,CONTROLLER://localhost:9093", "controller.listener.names",
                "CONTROLLER", "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:SSL",
                "controller.quorum.voters", "1@localhost:9093", "listener.name.controller.ssl.keystore.location",
                "/no/such/controller.p12", "listener.name.controller.ssl.keystore.password", "pw"));

        // Then: the metadata settings load the stores
        assertThatThrownBy(() -> BrokerMetadata.metadataConfig(config)).isInstanceOf(ConfigException.class)
                .hasMessage("Invalid value /no/such/controller.p12 for configuration "
                        + "listener.name.controller.ssl.keystore.location: the key store file does not exist");
    }
}
