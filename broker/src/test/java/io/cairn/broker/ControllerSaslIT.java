package io.cairn.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.cairn.broker.config.BrokerConfig;
import io.cairn.broker.config.SslSettings;
import io.cairn.broker.security.SslEngineFactory;
import io.cairn.isr.client.ClientSasl;
import io.cairn.isr.client.ClientTls;
import io.cairn.metadata.MetaProperties;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.QuorumFront;
import io.cairn.metadata.controller.ControllerEventListener;
import io.cairn.testkit.FreePorts;
import io.cairn.testkit.TestCertificates;
import io.cairn.testkit.TestDirectories;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.BrokerRegistrationRequestData;
import io.cairn.wire.message.BrokerRegistrationResponseData;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A SASL_SSL controller listener ({@code CONTROLLER:SASL_SSL}, {@code sasl.mechanism.controller.protocol=PLAIN}, the
 * test CA's stores as {@code ssl.*}): a controller and a broker-only node, formatted with the storage tool from their
 * properties files and started in this JVM as {@code cairn-server} starts them. The broker-only node joins the quorum
 * as a listener, registers through the active controller and follows the log, every link over TLS and authenticated
 * with SASL/PLAIN by the nodes' quorum fronts. The quorum's ports serve nothing to a TLS client that does not
 * authenticate, refuse wrong credentials with SASL_AUTHENTICATION_FAILED, close an oversized frame unread, and relay
 * an authenticated connection to the Raft server (its HTTP/2 SETTINGS frame comes back). Replaced stores (what a
 * dynamic {@code listener.name.controller.ssl.keystore.location} or {@code .ssl.truststore.location} gives) are what
 * the fronts' next connections use: the controller's renewed certificate is presented to the next client, and a
 * front's outbound link checks the peer with its new trust store.
 */
@Timeout(120)
class ControllerSaslIT {

    /** What a gRPC client sends first, and the frame type a gRPC server answers with (as ControllerTlsIT). */
    private static final byte[] HTTP2_PREFACE = ControllerTlsIT.HTTP2_PREFACE;
    private static final int SETTINGS_FRAME = ControllerTlsIT.SETTINGS_FRAME;
    private static final int CONTROLLER = 1;
    private static final int BROKER = 101;
    private static final String JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule required "
            + "username=\"quorum\" password=\"quorum-secret\" user_quorum=\"quorum-secret\" user_other=\"other-secret\";";

    private static Path dir;
    private static TestCertificates certs;
    private static int controllerPort;
    private static int listenerPort;
    private static BrokerConfig controllerConfig;
    /** The controller's quorum stores, which a test replaces as a dynamic config change does. */
    private static QuorumStores controllerStores;
    private static MetadataNode controller;
    private static MetadataNode broker;

    @BeforeAll
    static void startSecuredQuorum() throws Exception {
        dir = TestDirectories.createTempDirectory("cairn-controller-sasl-it-");
        certs = TestCertificates.create(dir.resolve("certs"));
        int[] ports = FreePorts.freePorts(3);
        controllerPort = ports[0];
        listenerPort = ports[1];
        String clusterId = MetaProperties.randomUuid().toString();
        String host = FreePorts.LOOPBACK;
        controllerConfig = format(clusterId, config(CONTROLLER, Map.of("process.roles", "controller",
                "listeners", "CONTROLLER://" + host + ":" + controllerPort)));
        BrokerConfig brokerConfig = format(clusterId, config(BROKER, Map.of("process.roles", "broker",
                "listeners", "PLAINTEXT://" + host + ":" + ports[2], "metadata.listener.host", host,
                "metadata.listener.port", Integer.toString(listenerPort))));
        controllerStores = BrokerMetadata.quorumStores(controllerConfig);
        controller = start(controllerConfig, controllerStores);
        broker = start(brokerConfig, BrokerMetadata.quorumStores(brokerConfig));
    }

    private static MetadataNode start(BrokerConfig config, QuorumStores stores) throws IOException {
        return MetadataNode.start(BrokerMetadata.metadataConfig(config), ControllerEventListener.NONE,
                BrokerMetadata.quorumFront(config, stores));
    }

    @AfterAll
    static void stop() {
        for (MetadataNode node : new MetadataNode[] {broker, controller}) {
            if (node != null) {
                node.close();
            }
        }
        TestDirectories.deleteRecursively(dir);
    }

    @Test
    void aBrokerOnlyNodeJoinsRegistersAndFollowsTheQuorumOverSaslSsl() throws Exception {
        // When: the broker-only node registers through the active controller (its Raft client, through the fronts)
        BrokerRegistrationResponseData registered = broker.registerBroker(registration(BROKER))
                .get(60, TimeUnit.SECONDS);

        // Then: committed by the controller and appended to the broker-only node's log (the leader's channel to it)
        assertThat(registered.errorCode()).isEqualTo(Errors.NONE.code());
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertThat(controller.currentImage().brokers()).containsKey(BROKER);
            assertThat(broker.currentImage().brokers()).containsKey(BROKER);
        });
    }

    @Test
    void onlyAnAuthenticatedConnectionReachesTheRaftServer() throws Exception {
        for (int port : new int[] {controllerPort, listenerPort}) {
            // TLS without SASL: the HTTP/2 preface is not a SaslHandshake, so the front closes the connection
            try (Socket socket = tls(port)) {
                socket.getOutputStream().write(HTTP2_PREFACE);
                assertThat(readUpTo(socket.getInputStream(), 9)).as("port %d", port).isEmpty();
            }
            // Wrong password, or a user outside the JAAS users: SASL_AUTHENTICATION_FAILED
            assertThatThrownBy(() -> authenticated(port, "quorum", "wrong").close()).isInstanceOf(IOException.class)
                    .hasMessageContaining("SASL_AUTHENTICATION_FAILED");
            assertThatThrownBy(() -> authenticated(port, "nobody", "x").close()).isInstanceOf(IOException.class)
                    .hasMessageContaining("SASL_AUTHENTICATION_FAILED");
            // The right credentials: the Raft server (gRPC) answers the preface with its SETTINGS frame
            try (Socket socket = authenticated(port, "other", "other-secret")) {
                socket.getOutputStream().write(HTTP2_PREFACE);
                byte[] header = readUpTo(socket.getInputStream(), 9);
                assertThat(header).hasSize(9);
                assertThat(header[3]).isEqualTo((byte) SETTINGS_FRAME);
            }
        }
    }

    @Test
    void anOversizedFrameBeforeAuthenticationIsClosedUnread() throws Exception {
        try (Socket socket = tls(controllerPort)) {
            socket.getOutputStream().write(ByteBuffer.allocate(8).putInt(Integer.MAX_VALUE).putInt(0).array());
            assertThat(readUpTo(socket.getInputStream(), 1)).isEmpty();
        }
    }

    @Test
    void aReplacedKeyStoreIsWhatTheFrontsNextConnectionPresents() throws Exception {
        // Given: a renewed controller certificate (same names, new key), as
        // listener.name.controller.ssl.keystore.location would name it
        Path renewed = certs.newBrokerKeystore("controller-renewed");
        Map<String, String> props = new HashMap<>(controllerConfig.originals());
        props.put("listener.name.controller.ssl.keystore.location", renewed.toString());

        // When
        controllerStores.replace(SslEngineFactory.create(SslSettings.forListener(props, "CONTROLLER")));

        // Then: the front's next TLS connection is shown it, and an authenticated one still reaches the Raft server
        try (SSLSocket socket = (SSLSocket) tls(controllerPort)) {
            assertThat(socket.getSession().getPeerCertificates()[0]).isEqualTo(certificate(renewed,
                    "controller-renewed"));
        }
        try (Socket socket = authenticated(controllerPort, "other", "other-secret")) {
            socket.getOutputStream().write(HTTP2_PREFACE);
            assertThat(readUpTo(socket.getInputStream(), 9)).hasSize(9);
        }
    }

    @Test
    void aReplacedTrustStoreIsWhatTheFrontsNextOutboundLinkChecksThePeerWith() throws Exception {
        // Given: a front of the controller's settings, whose route carries connections to the controller
        QuorumStores stores = BrokerMetadata.quorumStores(controllerConfig);
        QuorumFront front = BrokerMetadata.quorumFront(controllerConfig, stores);
        try {
            InetSocketAddress route = front.route(FreePorts.LOOPBACK, controllerPort);
            assertThat(http2ThroughRoute(route)).hasSize(9);

            // When: its trust store is replaced by the JVM's, which does not trust the test CA
            Map<String, String> props = new HashMap<>(controllerConfig.originals());
            props.keySet().removeIf(key -> key.startsWith("ssl.truststore."));
            stores.replace(SslEngineFactory.create(SslSettings.forListener(props, "CONTROLLER")));

            // Then: the next link fails its TLS handshake with the controller, so nothing is relayed
            assertThat(http2ThroughRoute(route)).isEmpty();
        } finally {
            front.close();
        }
    }

    /** What the Raft server behind {@code route} answers the HTTP/2 preface with (empty: the link was closed). */
    private static byte[] http2ThroughRoute(InetSocketAddress route) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(route, 5000);
            socket.setSoTimeout(15_000);
            try {
                socket.getOutputStream().write(HTTP2_PREFACE);
            } catch (IOException e) {
                return new byte[0]; // the front closed it already
            }
            return readUpTo(socket.getInputStream(), 9);
        }
    }

    /** The certificate of {@code alias} in the PKCS12 store {@code file}. */
    private static Certificate certificate(Path file, String alias) throws Exception {
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(file)) {
            store.load(in, certs.password().toCharArray());
        }
        return store.getCertificate(alias);
    }

    private static Socket tls(int port) throws IOException {
        Socket plain = new Socket();
        plain.connect(new InetSocketAddress(FreePorts.LOOPBACK, port), 5000);
        plain.setSoTimeout(15_000);
        return engines().connectClient(plain, FreePorts.LOOPBACK, port);
    }

    private static Socket authenticated(int port, String user, String password) throws IOException {
        Socket plain = new Socket();
        plain.connect(new InetSocketAddress(FreePorts.LOOPBACK, port), 5000);
        plain.setSoTimeout(15_000);
        SslEngineFactory engines = engines();
        ClientTls transport = (socket, host, p) -> engines.connectClient(socket, host, p);
        try {
            return new ClientSasl(transport, "PLAIN", user, password).secure(plain, FreePorts.LOOPBACK, port);
        } catch (IOException e) {
            plain.close();
            throw e;
        }
    }

    private static SslEngineFactory engines() {
        SslSettings ssl = SslSettings.forListener(controllerConfig.originals(), "CONTROLLER");
        return SslEngineFactory.create(ssl);
    }

    /** The node's properties with the SASL_SSL controller listener, written to a file as a user would. */
    private static Map<String, String> config(int nodeId, Map<String, String> extra) {
        Map<String, String> props = new HashMap<>(certs.brokerStoreConfig());
        props.put("node.id", Integer.toString(nodeId));
        props.put("controller.listener.names", "CONTROLLER");
        props.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:SASL_SSL");
        props.put("sasl.mechanism.controller.protocol", "PLAIN");
        props.put("listener.name.controller.sasl.enabled.mechanisms", "PLAIN");
        props.put("listener.name.controller.plain.sasl.jaas.config", JAAS);
        props.put("listener.name.controller.connection.failed.authentication.delay.ms", "10");
        props.put("controller.quorum.voters", CONTROLLER + "@" + FreePorts.LOOPBACK + ":" + controllerPort);
        props.put("controller.quorum.election.timeout.ms", "500");
        props.put("log.dirs", dir.resolve("node-" + nodeId).toString());
        props.putAll(extra);
        return props;
    }

    /** Formats the node's storage as {@code bin/cairn-storage format} does, from its properties file. */
    private static BrokerConfig format(String clusterId, Map<String, String> props) throws IOException {
        return ControllerTlsIT.format(dir, clusterId, props);
    }

    private static BrokerRegistrationRequestData registration(int brokerId) {
        return ControllerTlsIT.registration(controller.clusterId(), brokerId);
    }

    private static byte[] readUpTo(InputStream in, int count) throws IOException {
        byte[] bytes = new byte[count];
        int read = 0;
        while (read < count) {
            int n;
            try {
                n = in.read(bytes, read, count - read);
            } catch (IOException e) {
                break; // a reset or an alert: closed
            }
            if (n < 0) {
                break;
            }
            read += n;
        }
        return Arrays.copyOf(bytes, read);
    }

}
