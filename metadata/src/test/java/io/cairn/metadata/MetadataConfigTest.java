package io.cairn.metadata;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.security.KeyStore;
import java.util.HashMap;
import java.util.Map;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509KeyManager;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.Test;

/** MetadataConfig reads its keys with the config table's types, rules and defaults. */
class MetadataConfigTest {

    private static final Map<String, String> BASE = Map.of("process.roles", "broker,controller", "node.id", "1",
            "controller.quorum.voters", "1@localhost:9093");

    @Test
    void unsetKeysTakeKafkasDefaultsFromTheTable() {
        // When
        MetadataConfig config = MetadataConfig.from(BASE);

        // Then
        assertThat(config.electionTimeoutMs()).isEqualTo(1000);
        assertThat(config.requestTimeoutMs()).isEqualTo(2000);
        assertThat(config.snapshotThreshold()).isEqualTo(10_000);
        assertThat(config.controller().brokerSessionTimeoutMs()).isEqualTo(9000);
    }

    @Test
    void aValueThatFailsItsKeysRuleIsRefusedWithKafkasMessage() {
        // Given
        Map<String, String> bad = new HashMap<>(BASE);
        bad.put("broker.session.timeout.ms", "soon");

        // When / Then
        assertThatThrownBy(() -> MetadataConfig.from(bad)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("Invalid value soon for configuration broker.session.timeout.ms: Not a number of type INT");
    }

    @Test
    void theQuorumSpeaksWhatTheProtocolMapGivesTheFirstControllerListener() throws Exception {
        // Given
        Map<String, String> ssl = new HashMap<>(BASE);
        ssl.put("controller.listener.names", "controller,OTHER");
        ssl.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:SSL,OTHER:SSL");
        Map<String, String> sasl = new HashMap<>(ssl);
        sasl.put("listener.security.protocol.map", "CONTROLLER:SASL_SSL");

        // When
        MetadataConfig plaintext = MetadataConfig.from(BASE);
        MetadataConfig tls = MetadataConfig.from(ssl);

        // Then: PLAINTEXT needs nothing; SSL needs the stores the broker loads (the storage tool reads it as is)
        assertThat(plaintext.controllerSecurityProtocol()).isEqualTo("PLAINTEXT");
        plaintext.checkControllerSecurity(false);
        assertThat(tls.controllerSecurityProtocol()).isEqualTo("SSL");
        assertThatThrownBy(() -> tls.checkControllerSecurity(false)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("listener.security.protocol.map maps the controller listener CONTROLLER to SSL, "
                        + "but no key and trust stores were given");
        MetadataConfig secured = tls.withTls(anyTls());
        secured.checkControllerSecurity(false);
        assertThat(secured.withVoters(secured.voters()).tls()).isSameAs(secured.tls());
        assertThatThrownBy(() -> plaintext.withTls(anyTls()).checkControllerSecurity(false))
                .hasMessageContaining("which listener.security.protocol.map maps to PLAINTEXT");
        // SASL needs a front that authenticates the links (and does their TLS), and only SASL takes one
        MetadataConfig.from(sasl).checkControllerSecurity(true);
        assertThatThrownBy(() -> MetadataConfig.from(sasl).checkControllerSecurity(false))
                .hasMessageContaining("maps the controller listener CONTROLLER to SASL_SSL, but the metadata node was "
                        + "given nothing to authenticate its links with");
        assertThatThrownBy(() -> secured.checkControllerSecurity(true))
                .hasMessageContaining("A front authenticates the quorum's links, but listener.security.protocol.map "
                        + "maps the controller listener CONTROLLER to SSL");
    }

    /** Managers of an empty key store and the JVM's trusted certificates. */
    private static QuorumTls anyTls() throws Exception {
        KeyStore empty = KeyStore.getInstance("PKCS12");
        empty.load(null, null);
        KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keys.init(empty, new char[0]);
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init((KeyStore) null);
        return new QuorumTls((X509KeyManager) keys.getKeyManagers()[0], (X509TrustManager) trust.getTrustManagers()[0],
                true, true);
    }
}
