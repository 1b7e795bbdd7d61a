package io.cairn.compat.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import io.cairn.compat.group.GroupClients;
import io.cairn.compat.harness.KafkaHalfInFaults;
import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.FreePorts;
import io.cairn.testkit.TestCertificates;
import io.cairn.testkit.TestDirectories;
import java.io.File;
import java.io.InputStream;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * TLS listeners as Kafka serves them, on Cairn and Kafka 4.1.1 with the same configuration: one node with a
 * PLAINTEXT listener (the harness's probe), an SSL listener (server authentication only) and an MTLS listener
 * ({@code listener.name.mtls.ssl.client.auth=required}), all keys Kafka's; the stock Java producer and consumer over
 * SSL, a 5 MB fetch over TLS (file data copied through the TLS engine, not sent with sendfile), mutual TLS with and
 * without a client certificate, kcat over SSL, the SSL listener's key store swapped live by a dynamic broker config
 * (Kafka's refusals; the renewed certificate served to new clients and after a restart; the file rewritten in
 * place reloaded when the same location is given again; the listener's {@code ssl.enabled.protocols} changed per broker,
 * which Cairn's new connections take and Kafka's listener does not), an SSL and a SASL_SSL controller listener's key
 * store swapped live on the node, and a 3-node cluster whose inter-broker listener is SSL with mutual
 * TLS replicating acks=all records with every replica in sync.
 *
 * <p>The certificates are made once for the class with keytool ({@link TestCertificates}).
 */
@Timeout(180)
@ExtendWith(BrokerLogsExtension.class)
class TlsIT {

    private static final String REQUIRE_KCAT = "CAIRN_REQUIRE_KCAT";
    private static final int FIVE_MB = 5 << 20;
    private static final int RECORD_BYTES = 100 * 1024;

    /** The alias (and file name) of the renewed broker certificate a key store swap installs. */
    private static final String RENEWED = "broker-renewed";

    private static Path dir;
    private static TestCertificates certs;
    /** A PKCS12 key store with a new broker key and certificate (the broker's names, signed by the CA). */
    private static Path renewed;

    @BeforeAll
    static void makeCertificates() {
        dir = TestDirectories.createTempDirectory("cairn-tls-it-");
        certs = TestCertificates.create(dir.resolve("certs"));
        renewed = certs.newBrokerKeystore(RENEWED);
    }

    @AfterAll
    static void deleteCertificates() {
        TestDirectories.deleteRecursively(dir);
    }

    static Stream<BrokerKind> kinds() {
        return GroupClients.kinds();
    }

    /** The broker's key and trust stores, Kafka's keys. */
    private static Map<String, String> brokerStores() {
        return certs.brokerStoreConfig();
    }

    /** A client over SSL trusting the test CA, with the client certificate when {@code withCertificate}. */
    private static Properties sslClient(String bootstrap, boolean withCertificate) {
        Properties props = new Properties();
        props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SSL");
        props.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "PEM");
        props.put(SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, certs.caPem().toString());
        if (withCertificate) {
            props.put(SslConfigs.SSL_KEYSTORE_TYPE_CONFIG, "PKCS12");
            props.put(SslConfigs.SSL_KEYSTORE_LOCATION_CONFIG, certs.clientKeystore().toString());
            props.put(SslConfigs.SSL_KEYSTORE_PASSWORD_CONFIG, certs.password());
        }
        return props;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kinds")
    void clientsProduceAndConsumeOverSslAndMutualTls(BrokerKind kind) throws Exception {
        // Given: one node with PLAINTEXT, SSL and MTLS (client certificate required) listeners
        int[] ports = FreePorts.freePorts(2);
        String host = FreePorts.LOOPBACK;
        String ssl = host + ":" + ports[0];
        String mtls = host + ":" + ports[1];
        Map<String, String> config = new LinkedHashMap<>(brokerStores());
        config.put("listener.security.protocol.map", "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,MTLS:SSL");
        config.put("listener.name.mtls.ssl.client.auth", "required");
        config.put("offsets.topic.replication.factor", "1");
        config.put("transaction.state.log.replication.factor", "1");
        config.put("transaction.state.log.min.isr", "1");
        long begin = System.nanoTime();
        try (BrokerCluster cluster = BrokerCluster.create(kind, 1, config, node -> Map.of(
                "listeners", "PLAINTEXT://" + host + ":" + node.clientPort() + ",CONTROLLER://" + host + ":"
                        + node.controllerPort() + ",SSL://" + ssl + ",MTLS://" + mtls,
                "advertised.listeners", "PLAINTEXT://" + host + ":" + node.clientPort() + ",SSL://" + ssl
                        + ",MTLS://" + mtls))) {
            cluster.start();
            BrokerProcess broker = cluster.nodes().get(0);
            createTopic(cluster.bootstrapServers(), "tls", 1, (short) 1);

            // When: the stock producer writes 5 MB over SSL and the consumer reads it back in one large fetch
            produce(sslClient(ssl, false), "tls", FIVE_MB / RECORD_BYTES);
            Properties consumer = sslClient(ssl, false);
            consumer.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, Integer.toString(2 * FIVE_MB));
            consumer.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, Integer.toString(2 * FIVE_MB));
            List<byte[]> values = consume(consumer, "tls", FIVE_MB / RECORD_BYTES);

            // Then
            assertThat(values).hasSize(FIVE_MB / RECORD_BYTES).allSatisfy(v -> assertThat(v).hasSize(RECORD_BYTES));
            assertThat(values.get(7)[0]).isEqualTo((byte) 7);

            // And: mutual TLS works with the client certificate ...
            produce(sslClient(mtls, true), "tls", 3);
            assertThat(consume(sslClient(mtls, true), "tls", FIVE_MB / RECORD_BYTES + 3)).hasSize(
                    FIVE_MB / RECORD_BYTES + 3);

            // ... and refuses a client without one
            Properties anonymous = sslClient(mtls, false);
            anonymous.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
            anonymous.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
            try (Admin admin = Admin.create(anonymous)) {
                assertThatThrownBy(() -> admin.describeCluster().clusterId().get(30, TimeUnit.SECONDS))
                        .isInstanceOf(ExecutionException.class)
                        .hasCauseInstanceOf(SslAuthenticationException.class);
            }

            // And: librdkafka speaks to the SSL listener too
            createTopic(cluster.bootstrapServers(), "kcat-tls", 1, (short) 1);
            kcatOverSsl(ssl);
            assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
            System.out.printf("TlsIT %s single node: %d ms%n", kind, (System.nanoTime() - begin) / 1_000_000);

            // And: the SSL listener's key store is swapped live, stays swapped across a restart, and is reloaded
            // when its file is rewritten in place and the same location given again
            long swap = System.nanoTime();
            Path keystore = Files.copy(renewed, dir.resolve("swapped-" + kind + ".p12"));
            theKeyStoreIsSwappedLiveWithKafkasChecks(cluster.bootstrapServers(), ssl, keystore);
            broker.restart();
            await().atMost(Duration.ofSeconds(15)).untilAsserted(() ->
                    assertThat(servedCertificate(ssl)).isEqualTo(certificate(renewed, RENEWED)));
            FileTime loaded = Files.getLastModifiedTime(keystore);
            Files.copy(certs.brokerKeystore(), keystore, StandardCopyOption.REPLACE_EXISTING);
            Files.setLastModifiedTime(keystore, FileTime.fromMillis(loaded.toMillis() + 2000));
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                    cluster.bootstrapServers()))) {
                alter(admin, new ConfigResource(ConfigResource.Type.BROKER, "1"),
                        Map.of("listener.name.ssl.ssl.keystore.location", keystore.toString()));
            }
            await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> assertThat(servedCertificate(ssl))
                    .isEqualTo(certificate(certs.brokerKeystore(), "broker")));
            System.out.printf("TlsIT %s key store swaps and restart: %d ms%n", kind, (System.nanoTime() - swap)
                    / 1_000_000);

            // And: the listener's other ssl.* keys are accepted per broker on both
            theEnabledProtocolsChangeLiveOnCairnOnly(kind, cluster.bootstrapServers(), ssl);
        }
    }

    /**
     * Kafka's dynamic key store update ({@code kafka-configs --entity-type brokers --entity-name 1 --alter
     * --add-config listener.name.ssl.ssl.keystore.location=...}): refused for the cluster default and for a store
     * whose certificate has another distinguished name, with Kafka's messages; a renewed certificate (same name, new
     * key) is what the next TLS client sees, and DescribeConfigs shows the location but not the password.
     */
    private static void theKeyStoreIsSwappedLiveWithKafkasChecks(String bootstrap, String sslListener,
            Path keystore) throws Exception {
        ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, "1");
        String location = "listener.name.ssl.ssl.keystore.location";
        String password = "listener.name.ssl.ssl.keystore.password";
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            // Refused: the cluster default, and a key store whose certificates have other names
            assertThatThrownBy(() -> alter(admin, new ConfigResource(ConfigResource.Type.BROKER, ""),
                    Map.of(location, keystore.toString())))
                    .isInstanceOf(ExecutionException.class).cause().isInstanceOf(InvalidRequestException.class)
                    .hasMessage("Cannot update these configs at default cluster level, broker id must be specified: "
                            + "Set(" + location + ")");
            assertThatThrownBy(() -> alter(admin, broker, Map.of(location, certs.clientKeystore().toString())))
                    .isInstanceOf(ExecutionException.class).cause().isInstanceOf(InvalidRequestException.class)
                    .hasMessageStartingWith("Invalid value org.apache.kafka.common.config.ConfigException: "
                            + "Validation of dynamic config update of SSLFactory failed: "
                            + "org.apache.kafka.common.config.ConfigException: Keystore DistinguishedName does not "
                            + "match:  existing={alias=")
                    .hasMessageEndingWith(" for configuration Invalid dynamic configuration");
            assertThat(servedCertificate(sslListener)).isEqualTo(certificate(certs.brokerKeystore(), "broker"));

            // When: the renewed key store, with its password
            alter(admin, broker, Map.of(location, keystore.toString(), password, certs.password()));

            // Then
            await().atMost(Duration.ofSeconds(15)).untilAsserted(() ->
                    assertThat(servedCertificate(sslListener)).isEqualTo(certificate(renewed, RENEWED)));
        }
    }

    /**
     * {@code kafka-configs --entity-name 1 --alter --add-config listener.name.ssl.ssl.enabled.protocols=TLSv1.2}:
     * accepted by both; Cairn's next connections are TLSv1.2 only, while Kafka 4.1.1's listener keeps its engines
     * (its {@code SslFactory} copies only the store keys, so the value reaches only a listener added later).
     */
    private static void theEnabledProtocolsChangeLiveOnCairnOnly(BrokerKind kind, String bootstrap, String ssl)
            throws Exception {
        // Given
        assertThat(negotiated(ssl, "TLSv1.3")).isEqualTo("TLSv1.3");

        // When
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            alter(admin, new ConfigResource(ConfigResource.Type.BROKER, "1"),
                    Map.of("listener.name.ssl.ssl.enabled.protocols", "TLSv1.2"));
        }

        // Then
        if (kind == BrokerKind.CAIRN) {
            await().atMost(Duration.ofSeconds(15)).untilAsserted(() ->
                    assertThat(negotiated(ssl, "TLSv1.3")).startsWith("refused"));
        } else {
            await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThat(negotiated(ssl, "TLSv1.3")).isEqualTo("TLSv1.3"));
        }
        assertThat(negotiated(ssl, "TLSv1.2")).isEqualTo("TLSv1.2");
    }

    /** The protocol a new TLS client offering only {@code protocol} negotiates with {@code address}, or "refused". */
    private static String negotiated(String address, String protocol) throws Exception {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(certs.truststore())) {
            trust.load(in, certs.password().toCharArray());
        }
        TrustManagerFactory trustManagers = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trustManagers.init(trust);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, trustManagers.getTrustManagers(), null);
        String[] hostPort = address.split(":");
        try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket(hostPort[0],
                Integer.parseInt(hostPort[1]))) {
            socket.setSoTimeout(10_000);
            socket.setEnabledProtocols(new String[] {protocol});
            socket.startHandshake();
            return socket.getSession().getProtocol();
        } catch (SSLException | SocketException e) {
            return "refused: " + e.getMessage();
        }
    }

    private static void alter(Admin admin, ConfigResource resource, Map<String, String> values) throws Exception {
        List<AlterConfigOp> ops = values.entrySet().stream().map(e -> new AlterConfigOp(new ConfigEntry(e.getKey(),
                e.getValue()), AlterConfigOp.OpType.SET)).toList();
        admin.incrementalAlterConfigs(Map.of(resource, ops)).all().get(30, TimeUnit.SECONDS);
    }

    /** The certificate a new TLS client (trusting the test CA) is shown by {@code address}. */
    private static X509Certificate servedCertificate(String address) throws Exception {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(certs.truststore())) {
            trust.load(in, certs.password().toCharArray());
        }
        TrustManagerFactory trustManagers = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trustManagers.init(trust);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, trustManagers.getTrustManagers(), null);
        String[] hostPort = address.split(":");
        try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket(hostPort[0],
                Integer.parseInt(hostPort[1]))) {
            socket.setSoTimeout(10_000);
            socket.startHandshake();
            return (X509Certificate) socket.getSession().getPeerCertificates()[0];
        }
    }

    /** The certificate of {@code alias} in the PKCS12 store {@code file}. */
    private static X509Certificate certificate(Path file, String alias) throws Exception {
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(file)) {
            store.load(in, certs.password().toCharArray());
        }
        return (X509Certificate) store.getCertificate(alias);
    }

    /**
     * An SSL controller listener's key store swapped with {@code kafka-configs --entity-type brokers --entity-name 1
     * --alter --add-config listener.name.controller.ssl.keystore.location=...} on the node: the next TLS connection
     * to the controller listener (Kafka's socket server; Cairn's metadata quorum, Ratis over gRPC) is shown the
     * renewed certificate, and the node keeps serving clients.
     */
    @KafkaHalfInFaults
    void theControllerListenersKeyStoreIsSwappedLive(BrokerKind kind) throws Exception {
        // Given: one node whose controller listener is SSL
        Map<String, String> config = new LinkedHashMap<>(brokerStores());
        config.put("listener.security.protocol.map", "CONTROLLER:SSL,PLAINTEXT:PLAINTEXT");
        config.put("offsets.topic.replication.factor", "1");
        int[] controllerPort = new int[1];
        try (BrokerCluster cluster = BrokerCluster.create(kind, 1, config, node -> {
            controllerPort[0] = node.controllerPort();
            return Map.of();
        })) {
            cluster.start();
            String controller = FreePorts.LOOPBACK + ":" + controllerPort[0];
            assertThat(servedCertificateOverH2(controller)).isEqualTo(certificate(certs.brokerKeystore(), "broker"));

            // When
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                    cluster.bootstrapServers()))) {
                alter(admin, new ConfigResource(ConfigResource.Type.BROKER, "1"),
                        Map.of("listener.name.controller.ssl.keystore.location", renewed.toString()));
            }

            // Then
            await().atMost(Duration.ofSeconds(15)).untilAsserted(() ->
                    assertThat(servedCertificateOverH2(controller)).isEqualTo(certificate(renewed, RENEWED)));
            createTopic(cluster.bootstrapServers(), "after-controller-swap", 1, (short) 1);
        }
    }

    /**
     * A SASL_SSL controller listener's key store swapped the same way ({@code listener.name.controller.ssl.keystore
     * .location} for the node): a store whose certificate has another distinguished name is refused with Kafka's
     * message, the renewed one is what the next TLS connection to the controller listener (Kafka's socket server;
     * Cairn's quorum front) is shown, and the quorum keeps committing (a topic is created).
     */
    @KafkaHalfInFaults
    void theSaslSslControllerListenersKeyStoreIsSwappedLive(BrokerKind kind) throws Exception {
        // Given: one node whose controller listener is SASL_SSL with SASL/PLAIN
        Map<String, String> config = new LinkedHashMap<>(brokerStores());
        config.put("listener.security.protocol.map", "CONTROLLER:SASL_SSL,PLAINTEXT:PLAINTEXT");
        config.put("sasl.mechanism.controller.protocol", "PLAIN");
        config.put("listener.name.controller.sasl.enabled.mechanisms", "PLAIN");
        config.put("listener.name.controller.plain.sasl.jaas.config", "org.apache.kafka.common.security.plain"
                + ".PlainLoginModule required username=\"controller\" password=\"controller-secret\" "
                + "user_controller=\"controller-secret\";");
        config.put("offsets.topic.replication.factor", "1");
        int[] controllerPort = new int[1];
        try (BrokerCluster cluster = BrokerCluster.create(kind, 1, config, node -> {
            controllerPort[0] = node.controllerPort();
            return Map.of();
        })) {
            cluster.start();
            String controller = FreePorts.LOOPBACK + ":" + controllerPort[0];
            assertThat(servedCertificate(controller)).isEqualTo(certificate(certs.brokerKeystore(), "broker"));
            ConfigResource node = new ConfigResource(ConfigResource.Type.BROKER, "1");
            String location = "listener.name.controller.ssl.keystore.location";
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                    cluster.bootstrapServers()))) {
                assertThatThrownBy(() -> alter(admin, node, Map.of(location, certs.clientKeystore().toString())))
                        .isInstanceOf(ExecutionException.class).cause().isInstanceOf(InvalidRequestException.class)
                        .hasMessageContaining("Keystore DistinguishedName does not match");

                // When
                alter(admin, node, Map.of(location, renewed.toString()));
            }

            // Then
            await().atMost(Duration.ofSeconds(15)).untilAsserted(() ->
                    assertThat(servedCertificate(controller)).isEqualTo(certificate(renewed, RENEWED)));
            createTopic(cluster.bootstrapServers(), "after-sasl-controller-swap", 1, (short) 1);
        }
    }

    /**
     * The certificate a new TLS client (trusting the test CA, offering ALPN h2 as gRPC's clients do) is shown by
     * {@code address}.
     */
    private static X509Certificate servedCertificateOverH2(String address) throws Exception {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(certs.truststore())) {
            trust.load(in, certs.password().toCharArray());
        }
        TrustManagerFactory trustManagers = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trustManagers.init(trust);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, trustManagers.getTrustManagers(), null);
        String[] hostPort = address.split(":");
        try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket(hostPort[0],
                Integer.parseInt(hostPort[1]))) {
            socket.setSoTimeout(10_000);
            SSLParameters parameters = socket.getSSLParameters();
            parameters.setApplicationProtocols(new String[] {"h2"});
            socket.setSSLParameters(parameters);
            socket.startHandshake();
            return (X509Certificate) socket.getSession().getPeerCertificates()[0];
        }
    }

    @KafkaHalfInFaults
    void aClusterReplicatesOverAnSslInterBrokerListenerWithMutualTls(BrokerKind kind) throws Exception {
        // Given: three nodes whose INTERNAL listener (the inter-broker one) is SSL and requires client certificates
        int[] internalPorts = FreePorts.freePorts(3);
        String host = FreePorts.LOOPBACK;
        Map<String, String> config = new LinkedHashMap<>(brokerStores());
        config.put("listener.security.protocol.map", "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,INTERNAL:SSL");
        config.put("inter.broker.listener.name", "INTERNAL");
        config.put("listener.name.internal.ssl.client.auth", "required");
        config.put("offsets.topic.replication.factor", "3");
        long begin = System.nanoTime();
        try (BrokerCluster cluster = BrokerCluster.create(kind, 3, config, node -> {
            String internal = host + ":" + internalPorts[node.nodeId() - 1];
            return Map.of("listeners", "PLAINTEXT://" + host + ":" + node.clientPort() + ",CONTROLLER://" + host
                            + ":" + node.controllerPort() + ",INTERNAL://" + internal,
                    "advertised.listeners", "PLAINTEXT://" + host + ":" + node.clientPort() + ",INTERNAL://"
                            + internal);
        })) {
            cluster.start();
            createTopic(cluster.bootstrapServers(), "replicated", 3, (short) 3);

            // When: acks=all records, through the PLAINTEXT client listener
            Properties producer = new Properties();
            producer.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
            produce(producer, "replicated", 30);

            // Then: every partition has its three replicas in sync (the followers fetched over TLS)
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                    cluster.bootstrapServers()))) {
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                    TopicDescription topic = admin.describeTopics(List.of("replicated")).allTopicNames()
                            .get(10, TimeUnit.SECONDS).get("replicated");
                    assertThat(topic.partitions()).hasSize(3)
                            .allSatisfy(p -> assertThat(p.isr()).hasSize(3));
                });
            }
            Properties consumer = new Properties();
            consumer.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
            assertThat(consume(consumer, "replicated", 30)).hasSize(30);
            for (BrokerProcess node : cluster.nodes()) {
                if (kind == BrokerKind.CAIRN) {
                    assertThat(node.logLinesContaining("Inter-broker clients connect over TLS")).isNotEmpty();
                }
                assertThat(node.logLinesContaining("Failed authentication")).isEmpty();
            }
            System.out.printf("TlsIT %s 3-node SSL inter-broker: %d ms%n", kind, (System.nanoTime() - begin)
                    / 1_000_000);
        }
    }

    private static void createTopic(String bootstrap, String topic, int partitions, short replication)
            throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, replication))).all().get(30, TimeUnit.SECONDS);
        }
    }

    /** {@code count} acks=all records of {@link #RECORD_BYTES} bytes, the i-th filled with the byte i. */
    private static void produce(Properties props, String topic, int count) throws Exception {
        Properties producerProps = new Properties();
        producerProps.putAll(props);
        producerProps.put(ProducerConfig.ACKS_CONFIG, "all");
        producerProps.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        producerProps.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps)) {
            for (int i = 0; i < count; i++) {
                byte[] value = new byte[RECORD_BYTES];
                Arrays.fill(value, (byte) i);
                producer.send(new ProducerRecord<>(topic, value));
            }
            producer.flush();
        }
    }

    /** Reads {@code count} records of every partition of {@code topic} from the beginning, assigned (no group). */
    private static List<byte[]> consume(Properties props, String topic, int count) {
        Properties consumerProps = new Properties();
        consumerProps.putAll(props);
        consumerProps.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        consumerProps.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        consumerProps.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<byte[]> values = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps)) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic, Duration.ofSeconds(30)).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (values.size() < count && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(500))) {
                    values.add(record.value());
                }
            }
        }
        return values;
    }

    /** kcat produces and consumes over SSL, trusting the CA; skipped without kcat unless it is required. */
    private static void kcatOverSsl(String bootstrap) throws Exception {
        Optional<Path> kcat = Arrays.stream(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
                .filter(d -> !d.isBlank()).map(d -> Paths.get(d, "kcat")).filter(Files::isExecutable).findFirst();
        if (kcat.isEmpty()) {
            if (System.getenv(REQUIRE_KCAT) != null) {
                fail("kcat is not on PATH and " + REQUIRE_KCAT + " is set");
            }
            System.out.println("TlsIT: kcat is not on PATH; its part is skipped");
            return;
        }
        List<String> ssl = List.of("-b", bootstrap, "-X", "security.protocol=ssl", "-X",
                "ssl.ca.location=" + certs.caPem());
        String input = "one\ntwo\nthree\n";
        Result produced = run(kcat.get(), input, concat(ssl, "-P", "-t", "kcat-tls"));
        assertThat(produced.exitCode()).as("%s", produced).isZero();
        Result consumed = run(kcat.get(), "", concat(ssl, "-C", "-t", "kcat-tls", "-o", "beginning", "-c", "3",
                "-e"));
        assertThat(consumed.exitCode()).as("%s", consumed).isZero();
        assertThat(consumed.stdout().lines().toList()).containsExactly("one", "two", "three");
    }

    private static List<String> concat(List<String> first, String... rest) {
        List<String> all = new ArrayList<>(first);
        all.addAll(List.of(rest));
        return all;
    }

    private static Result run(Path tool, String stdin, List<String> args) throws Exception {
        Path work = Files.createTempDirectory(dir, "kcat-");
        Path in = Files.writeString(work.resolve("stdin"), stdin, StandardCharsets.UTF_8);
        List<String> command = new ArrayList<>();
        command.add(tool.toString());
        command.addAll(args);
        Process process = new ProcessBuilder(command).redirectInput(in.toFile())
                .redirectOutput(work.resolve("stdout").toFile()).redirectError(work.resolve("stderr").toFile())
                .start();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw new AssertionError("kcat " + command + " (pid " + process.pid() + ") did not finish: "
                    + Files.readString(work.resolve("stderr")));
        }
        return new Result(command, process.exitValue(), Files.readString(work.resolve("stdout")),
                Files.readString(work.resolve("stderr")));
    }

    private record Result(List<String> command, int exitCode, String stdout, String stderr) {
    }
}
