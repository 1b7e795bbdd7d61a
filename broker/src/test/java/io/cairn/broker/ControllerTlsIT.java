package io.cairn.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.cairn.broker.config.BrokerConfig;
import io.cairn.broker.config.SslSettings;
import io.cairn.broker.security.SslEngineFactory;
import io.cairn.metadata.MetaProperties;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.StorageTool;
import io.cairn.testkit.FreePorts;
import io.cairn.testkit.TestCertificates;
import io.cairn.testkit.TestDirectories;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.BrokerRegistrationRequestData;
import io.cairn.wire.message.BrokerRegistrationResponseData;
import io.cairn.wire.protocol.Uuid;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.Writer;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An SSL controller listener with mutual TLS ({@code CONTROLLER:SSL}, {@code ssl.client.auth=required}, the test CA's
 * PKCS12 stores as {@code ssl.*}): a controller and a broker-only node, formatted with the storage tool from their
 * properties files and started in this JVM as {@code cairn-server} starts them. The broker-only node joins the quorum
 * as a listener, registers through the active controller and follows the log, all over TLS; the quorum's ports
 * answer nothing to a plaintext HTTP/2 client, and refuse TLS clients without a certificate of the CA or that do not
 * trust it, while a client with the CA's client certificate is served; a replaced key store (what a dynamic
 * {@code listener.name.controller.ssl.keystore.location} gives) is what the next TLS connection to the quorum sees.
 */
@Timeout(120)
class ControllerTlsIT {

    /** HTTP/2's client connection preface and an empty SETTINGS frame: what a gRPC client sends first. */
    static final byte[] HTTP2_PREFACE = concat("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
            .getBytes(StandardCharsets.US_ASCII), new byte[] {0, 0, 0, 4, 0, 0, 0, 0, 0});
    static final int SETTINGS_FRAME = 4;
    private static final int CONTROLLER = 1;
    private static final int BROKER = 101;

    private static Path dir;
    private static TestCertificates certs;
    private static int controllerPort;
    private static int listenerPort;
    private static MetadataNode controller;
    /** The controller's quorum stores, which a test replaces as a dynamic config change does. */
    private static QuorumStores controllerStores;
    private static MetadataNode broker;

    @BeforeAll
    static void startSecuredQuorum() throws Exception {
        dir = TestDirectories.createTempDirectory("cairn-controller-tls-it-");
        certs = TestCertificates.create(dir.resolve("certs"));
        int[] ports = FreePorts.freePorts(3);
        controllerPort = ports[0];
        listenerPort = ports[1];
        String clusterId = MetaProperties.randomUuid().toString();
        String host = FreePorts.LOOPBACK;
        BrokerConfig controllerConfig = format(clusterId, config(CONTROLLER, Map.of("process.roles", "controller",
                "listeners", "CONTROLLER://" + host + ":" + controllerPort)));
        BrokerConfig brokerConfig = format(clusterId, config(BROKER, Map.of("process.roles", "broker",
                "listeners", "PLAINTEXT://" + host + ":" + ports[2], "metadata.listener.host", host,
                "metadata.listener.port", Integer.toString(listenerPort))));
        controllerStores = QuorumStores.load(controllerConfig.controllerSsl());
        controller = MetadataNode.start(BrokerMetadata.metadataConfig(controllerConfig, controllerStores));
        broker = MetadataNode.start(BrokerMetadata.metadataConfig(brokerConfig));
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
    void aBrokerOnlyNodeJoinsRegistersAndFollowsTheQuorumOverMutualTls() throws Exception {
        // When: the broker-only node registers through the active controller (its Raft client, over TLS)
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
    void aPlaintextClientIsNotServed() throws Exception {
        for (int port : new int[] {controllerPort, listenerPort}) {
            byte[] answer;
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress(FreePorts.LOOPBACK, port), 5000);
                socket.setSoTimeout(5000);
                socket.getOutputStream().write(HTTP2_PREFACE);
                answer = readUpTo(socket.getInputStream(), 9);
            } catch (IOException e) {
                answer = new byte[0];
            }
            // A plaintext gRPC server answers the preface with its SETTINGS frame; a TLS one closes (or alerts).
            assertThat(answer.length == 9 && answer[3] == SETTINGS_FRAME).as("an HTTP/2 SETTINGS frame from port %d",
                    port).isFalse();
        }
    }

    @Test
    void onlyClientsWithACertificateOfTheCaThatTrustTheCaAreServed() throws Exception {
        KeyManager[] caSigned = keyManagers(certs.clientKeystore());
        KeyManager[] selfSigned = keyManagers(selfSignedKeystore());
        TrustManager[] trustsCa = trustManagers(certs.truststore());

        // A client certificate of the CA, trusting the CA: served (HTTP/2 over TLS, ALPN h2)
        assertThat(http2OverTls(controllerPort, caSigned, trustsCa)).isEqualTo(SETTINGS_FRAME);
        assertThat(http2OverTls(listenerPort, caSigned, trustsCa)).isEqualTo(SETTINGS_FRAME);

        // No client certificate, or one the CA did not sign: refused by the server (mutual TLS)
        assertRefused(controllerPort, new KeyManager[0], trustsCa);
        assertRefused(controllerPort, selfSigned, trustsCa);
        assertRefused(listenerPort, selfSigned, trustsCa);
        // Trusting another CA (the JVM's) only: the server's certificate is refused
        assertRefused(controllerPort, caSigned, null);
    }

    @Test
    void aReplacedKeyStoreIsWhatNewQuorumConnectionsPresent() throws Exception {
        // Given: a renewed controller certificate (same names, new key), as
        // listener.name.controller.ssl.keystore.location would name it
        Path renewed = certs.newBrokerKeystore("controller-renewed");
        Map<String, String> props = new HashMap<>(certs.brokerStoreConfig());
        props.put("listener.name.controller.ssl.keystore.location", renewed.toString());
        props.put("listener.name.controller.ssl.client.auth", "required");

        // When
        controllerStores.replace(SslEngineFactory.create(SslSettings.forListener(props, "CONTROLLER")));

        // Then: gRPC's TLS (BoringSSL through Netty) presents it to the next connection, which is served
        assertThat(servedCertificate(controllerPort)).isEqualTo(load(renewed).getCertificate("controller-renewed"));
        assertThat(http2OverTls(controllerPort, keyManagers(certs.clientKeystore()),
                trustManagers(certs.truststore()))).isEqualTo(SETTINGS_FRAME);
    }

    /** The certificate the quorum's server at {@code port} presents to a TLS client of the CA. */
    private static Certificate servedCertificate(int port) throws Exception {
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(keyManagers(certs.clientKeystore()), trustManagers(certs.truststore()), null);
        try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket(FreePorts.LOOPBACK, port)) {
            socket.setSoTimeout(5000);
            SSLParameters parameters = socket.getSSLParameters();
            parameters.setApplicationProtocols(new String[] {"h2"});
            socket.setSSLParameters(parameters);
            socket.startHandshake();
            return socket.getSession().getPeerCertificates()[0];
        }
    }

    /** The connection fails (a handshake failure, an alert or a close), and not by waiting for an answer. */
    private static void assertRefused(int port, KeyManager[] keys, TrustManager[] trust) {
        assertThatThrownBy(() -> http2OverTls(port, keys, trust)).isInstanceOf(IOException.class)
                .isNotInstanceOf(SocketTimeoutException.class);
    }

    /** The broker's properties with the SSL controller listener, written to a file as a user would. */
    private static Map<String, String> config(int nodeId, Map<String, String> extra) {
        Map<String, String> props = new HashMap<>(certs.brokerStoreConfig());
        props.put("node.id", Integer.toString(nodeId));
        props.put("controller.listener.names", "CONTROLLER");
        props.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:SSL");
        props.put("listener.name.controller.ssl.client.auth", "required");
        props.put("controller.quorum.voters", CONTROLLER + "@" + FreePorts.LOOPBACK + ":" + controllerPort);
        props.put("controller.quorum.election.timeout.ms", "500");
        props.put("log.dirs", dir.resolve("node-" + nodeId).toString());
        props.putAll(extra);
        return props;
    }

    /** Formats the node's storage as {@code bin/cairn-storage format} does, from its properties file. */
    private static BrokerConfig format(String clusterId, Map<String, String> props) throws IOException {
        return format(dir, clusterId, props);
    }

    /**
     * Formats a node's storage as {@code bin/cairn-storage format} does, from its properties file written in
     * {@code dir} (also ControllerSaslIT's).
     */
    static BrokerConfig format(Path dir, String clusterId, Map<String, String> props) throws IOException {
        Path file = dir.resolve("server-" + props.get("node.id") + ".properties");
        Properties properties = new Properties();
        properties.putAll(props);
        try (Writer writer = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            properties.store(writer, null);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code = StorageTool.run(new String[] {"format", "--cluster-id", clusterId, "--config", file.toString()},
                new PrintStream(out, true, StandardCharsets.UTF_8));
        assertThat(code).as(out.toString(StandardCharsets.UTF_8)).isZero();
        return BrokerConfig.load(file, Map.of());
    }

    private static BrokerRegistrationRequestData registration(int brokerId) {
        return registration(controller.clusterId(), brokerId);
    }

    /** A registration of broker {@code brokerId} with one PLAINTEXT listener (also ControllerSaslIT's). */
    static BrokerRegistrationRequestData registration(String clusterId, int brokerId) {
        UUID random = UUID.randomUUID();
        List<BrokerRegistrationRequestData.Listener> listeners = new ArrayList<>();
        listeners.add(new BrokerRegistrationRequestData.Listener().setName("PLAINTEXT").setHost(FreePorts.LOOPBACK)
                .setPort(9092).setSecurityProtocol((short) 0));
        return new BrokerRegistrationRequestData().setBrokerId(brokerId).setClusterId(clusterId)
                .setIncarnationId(new Uuid(random.getMostSignificantBits(), random.getLeastSignificantBits()))
                .setListeners(listeners);
    }

    /**
     * Opens TLS to {@code port} with ALPN h2 (as gRPC does) and the given managers (null trust: the JVM's), sends
     * the HTTP/2 preface and returns the type of the first frame the server sends.
     *
     * @throws IOException when the handshake, or the server after it, refuses the connection
     */
    private static int http2OverTls(int port, KeyManager[] keys, TrustManager[] trust) throws Exception {
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(keys, trust, null);
        try (Socket plain = new Socket()) {
            plain.connect(new InetSocketAddress(FreePorts.LOOPBACK, port), 5000);
            plain.setSoTimeout(5000);
            SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket(plain, FreePorts.LOOPBACK, port,
                    true);
            SSLParameters parameters = socket.getSSLParameters();
            parameters.setApplicationProtocols(new String[] {"h2"});
            socket.setSSLParameters(parameters);
            socket.startHandshake();
            socket.getOutputStream().write(HTTP2_PREFACE);
            socket.getOutputStream().flush();
            byte[] header = readUpTo(socket.getInputStream(), 9);
            if (header.length < 9) {
                throw new EOFException("closed after " + header.length + " bytes");
            }
            return header[3];
        }
    }

    private static byte[] readUpTo(InputStream in, int count) throws IOException {
        byte[] bytes = new byte[count];
        int read = 0;
        while (read < count) {
            int n = in.read(bytes, read, count - read);
            if (n < 0) {
                break;
            }
            read += n;
        }
        return Arrays.copyOf(bytes, read);
    }

    private static KeyManager[] keyManagers(Path pkcs12) throws Exception {
        KeyManagerFactory factory = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        factory.init(load(pkcs12), certs.password().toCharArray());
        return factory.getKeyManagers();
    }

    private static TrustManager[] trustManagers(Path pkcs12) throws Exception {
        TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        factory.init(load(pkcs12));
        return factory.getTrustManagers();
    }

    private static KeyStore load(Path pkcs12) throws Exception {
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(pkcs12)) {
            store.load(in, certs.password().toCharArray());
        }
        return store;
    }

    /** A key store with a self-signed certificate (its own CA, not the test CA), made by keytool. */
    private static Path selfSignedKeystore() throws Exception {
        Path store = dir.resolve("self-signed.p12");
        Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-J-XX:TieredStopAtLevel=1", "-genkeypair", "-alias", "intruder", "-keyalg", "EC", "-groupname",
                "secp256r1", "-dname", "CN=intruder", "-validity", "1", "-keystore", store.toString(), "-storetype",
                "PKCS12", "-storepass", certs.password(), "-keypass", certs.password())
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        assertThat(keytool.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(keytool.exitValue()).isZero();
        return store;
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] all = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }
}
