package io.cairn.compat.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.cairn.compat.group.GroupClients;
import io.cairn.compat.harness.KafkaHalfInFaults;
import io.cairn.compat.harness.SlowKinds;
import io.cairn.isr.client.ScramClient;
import io.cairn.metadata.image.ScramMechanism;
import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.FreePorts;
import io.cairn.testkit.RawKafkaClient;
import io.cairn.wire.message.MetadataRequestData;
import io.cairn.wire.message.MetadataResponseData;
import io.cairn.wire.message.SaslAuthenticateRequestData;
import io.cairn.wire.message.SaslAuthenticateResponseData;
import io.cairn.wire.message.SaslHandshakeRequestData;
import io.cairn.wire.message.SaslHandshakeResponseData;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * SASL re-authentication (KIP-368) as Kafka serves it, on Cairn and Kafka 4.1.1 with the same configuration: one
 * node (started once per kind) whose SASL_PLAINTEXT listener offers PLAIN and SCRAM-SHA-256 with
 * {@code connections.max.reauth.ms=3000}, and whose CLIENTS listener (SASL_PLAINTEXT too) overrides it with
 * {@code listener.name.clients.connections.max.reauth.ms=10000}. A stock producer and a group consumer per mechanism run
 * side by side on CLIENTS for three session lifetimes on their first connections, re-authenticating as they go, and
 * lose no record;
 * a raw connection is told the lifetime
 * by SaslAuthenticate v2, may re-authenticate as the same user (the new session outlives the first), is closed
 * unanswered at its first request after the lifetime, and is refused and closed when it re-authenticates as another
 * user or with another mechanism. A 3-node cluster whose inter-broker listener is SASL_PLAINTEXT with a session
 * lifetime keeps every replica in sync while acks=all records flow for four lifetimes: the followers re-authenticate
 * (on Cairn, its inter-broker client does what Kafka's {@code NetworkClient} does, and the brokers' metrics count
 * it).
 */
@Timeout(180)
@ExtendWith(BrokerLogsExtension.class)
class ReauthenticationIT {

    private static final long MAX_REAUTH_MS = 3000;
    /**
     * The stock clients' listener's lifetime: Kafka's client re-authenticates at a random 85-95 % of it, so a request
     * it sends just before that mark and the broker reads more than 5 % later (a host stall on a shared test machine)
     * meets an expired session and reconnects, in Kafka as in Cairn; 5 % of 10 s is more than such stalls last.
     */
    private static final long CLIENTS_MAX_REAUTH_MS = 10_000;
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final String PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule";
    private static final String SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule";
    private static final Map<String, String> USERS = Map.of("alice", "alice-secret", "admin", "admin-secret");
    private static final Map<BrokerKind, Node> NODES = new EnumMap<>(BrokerKind.class);

    /**
     * A started node: its cluster, the PLAINTEXT bootstrap, the host, the SASL_PLAINTEXT port (sessions of
     * {@link #MAX_REAUTH_MS}) and the CLIENTS port (SASL_PLAINTEXT, sessions of {@link #CLIENTS_MAX_REAUTH_MS}).
     */
    private record Node(BrokerCluster cluster, String plaintext, String host, int saslPort, int clientsPort) {

        String clients() {
            return host + ":" + clientsPort;
        }
    }

    static Stream<Arguments> kindsAndMechanisms() {
        return SlowKinds.kinds().flatMap(kind -> Stream.of(Arguments.of(kind, "PLAIN"),
                Arguments.of(kind, "SCRAM-SHA-256")));
    }

    @AfterAll
    static void stopNodes() {
        NODES.values().forEach(node -> node.cluster().close());
        NODES.clear();
    }

    private static synchronized Node node(BrokerKind kind) throws Exception {
        Node started = NODES.get(kind);
        if (started != null) {
            return started;
        }
        String host = FreePorts.LOOPBACK;
        int[] ports = FreePorts.freePorts(2);
        int saslPort = ports[0];
        int clientsPort = ports[1];
        Map<String, String> config = new LinkedHashMap<>();
        config.put("listener.security.protocol.map", "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,"
                + "SASL_PLAINTEXT:SASL_PLAINTEXT,CLIENTS:SASL_PLAINTEXT");
        config.put("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256");
        for (String listener : List.of("sasl_plaintext", "clients")) {
            config.put("listener.name." + listener + ".plain.sasl.jaas.config", PLAIN_MODULE + " required"
                    + " user_alice=\"alice-secret\" user_admin=\"admin-secret\";");
            config.put("listener.name." + listener + ".scram-sha-256.sasl.jaas.config", SCRAM_MODULE + " required;");
        }
        config.put("connections.max.reauth.ms", String.valueOf(MAX_REAUTH_MS));
        config.put("listener.name.clients.connections.max.reauth.ms", String.valueOf(CLIENTS_MAX_REAUTH_MS));
        config.put("offsets.topic.replication.factor", "1");
        config.put("transaction.state.log.replication.factor", "1");
        config.put("transaction.state.log.min.isr", "1");
        config.put("group.initial.rebalance.delay.ms", "0");
        BrokerCluster cluster = BrokerCluster.create(kind, 1, config, n -> Map.of(
                "listeners", "PLAINTEXT://" + host + ":" + n.clientPort() + ",CONTROLLER://" + host + ":"
                        + n.controllerPort() + ",SASL_PLAINTEXT://" + host + ":" + saslPort + ",CLIENTS://" + host + ":"
                        + clientsPort,
                "advertised.listeners", "PLAINTEXT://" + host + ":" + n.clientPort() + ",SASL_PLAINTEXT://" + host
                        + ":" + saslPort + ",CLIENTS://" + host + ":" + clientsPort));
        try {
            cluster.start();
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                    cluster.bootstrapServers()))) {
                List<UserScramCredentialUpsertion> upserts = USERS.entrySet().stream()
                        .map(user -> new UserScramCredentialUpsertion(user.getKey(), new ScramCredentialInfo(
                                org.apache.kafka.clients.admin.ScramMechanism.SCRAM_SHA_256, 8192), user.getValue()))
                        .toList();
                admin.alterUserScramCredentials(List.copyOf(upserts)).all().get(30, TimeUnit.SECONDS);
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(admin
                        .describeUserScramCredentials(List.copyOf(USERS.keySet())).all().get(10, TimeUnit.SECONDS))
                        .hasSize(USERS.size()));
            }
        } catch (Exception | AssertionError e) {
            cluster.close();
            throw e;
        }
        Node node = new Node(cluster, cluster.bootstrapServers(), host, saslPort, clientsPort);
        NODES.put(kind, node);
        return node;
    }

    private static Properties client(Node node, String mechanism) {
        Properties props = new Properties();
        props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, node.clients());
        props.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
        props.put(SaslConfigs.SASL_MECHANISM, mechanism);
        String module = mechanism.equals("PLAIN") ? PLAIN_MODULE : SCRAM_MODULE;
        props.put(SaslConfigs.SASL_JAAS_CONFIG, module + " required username=\"alice\" password=\"alice-secret\";");
        return props;
    }

    // Waits out credential lifetimes (about 20-30 s a kind): both halves run with -Pfaults, keeping mvn verify short.
    @Tag("faults")
    @ParameterizedTest
    @EnumSource(BrokerKind.class)
    void producersAndGroupConsumersReauthenticateOnTheirConnectionsAndLoseNothing(BrokerKind kind) throws Exception {
        // Given: a producer and a group consumer per mechanism, side by side on the CLIENTS listener
        Node node = node(kind);
        int failuresBefore = node.cluster().nodes().get(0).logLinesContaining("Failed re-authentication").size();
        List<Clients> pairs = new ArrayList<>();
        try {
            for (String mechanism : List.of("PLAIN", "SCRAM-SHA-256")) {
                pairs.add(Clients.open(node, mechanism));
            }
            long warmUpDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            for (Clients pair : pairs) {
                pair.send("warm-up").get(30, TimeUnit.SECONDS);
            }
            while (pairs.stream().anyMatch(pair -> pair.received.isEmpty()) && System.nanoTime() < warmUpDeadline) {
                pairs.forEach(Clients::poll);
            }
            for (Clients pair : pairs) {
                assertThat(pair.received).as("%s: the consumer joined and read the first record", pair.mechanism)
                        .containsExactly("warm-up");
                pair.countConnections();
            }

            // When: they keep working for three session lifetimes of the CLIENTS listener
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(3 * CLIENTS_MAX_REAUTH_MS);
            int i = 0;
            while (System.nanoTime() < end) {
                String value = "r-" + i++;
                for (Clients pair : pairs) {
                    pair.send(value);
                    pair.poll();
                }
            }
            long drainDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            pairs.forEach(pair -> pair.producer.flush());
            while (pairs.stream().anyMatch(pair -> pair.received.size() < pair.sent.size())
                    && System.nanoTime() < drainDeadline) {
                pairs.forEach(Clients::poll);
            }

            // Then: nothing lost, the same connections, each client re-authenticated on them more than once
            for (Clients pair : pairs) {
                pair.consumer.commitSync(Duration.ofSeconds(30));
                pair.assertReauthenticatedAndLostNothing();
            }
        } finally {
            pairs.forEach(Clients::close);
        }
        assertThat(node.cluster().nodes().get(0).logLinesContaining("Failed re-authentication")).as("the node shared "
                + "with the other cases logged no new failure").hasSize(failuresBefore);
    }

    /** A producer and a group consumer authenticating with one mechanism, on a topic of their own. */
    private static final class Clients {
        final String mechanism;
        final String topic;
        final KafkaProducer<String, String> producer;
        final KafkaConsumer<String, String> consumer;
        final List<String> sent = new ArrayList<>();
        final List<String> received = new ArrayList<>();
        double producerConnections;
        double consumerConnections;

        private Clients(String mechanism, String topic, KafkaProducer<String, String> producer,
                        KafkaConsumer<String, String> consumer) {
            this.mechanism = mechanism;
            this.topic = topic;
            this.producer = producer;
            this.consumer = consumer;
        }

        static Clients open(Node node, String mechanism) throws Exception {
            String topic = GroupClients.uniqueName("reauth-" + mechanism.toLowerCase(Locale.ROOT));
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, node.plaintext()))) {
                admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            }
            Properties producerProps = client(node, mechanism);
            producerProps.put(ProducerConfig.ACKS_CONFIG, "all");
            producerProps.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            producerProps.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            Properties consumerProps = client(node, mechanism);
            consumerProps.put(ConsumerConfig.GROUP_ID_CONFIG, GroupClients.uniqueName("reauth-group"));
            consumerProps.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            consumerProps.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            consumerProps.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps);
            KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps);
            consumer.subscribe(List.of(topic));
            return new Clients(mechanism, topic, producer, consumer);
        }

        Future<?> send(String value) {
            sent.add(value);
            return producer.send(new ProducerRecord<>(topic, value));
        }

        void poll() {
            ReauthenticationIT.poll(consumer, received);
        }

        void countConnections() {
            producerConnections = metric(producer.metrics(), "connection-creation-total");
            consumerConnections = metric(consumer.metrics(), "connection-creation-total");
        }

        void assertReauthenticatedAndLostNothing() {
            assertThat(received).as(mechanism).isEqualTo(sent);
            assertThat(metric(producer.metrics(), "connection-creation-total")).as(mechanism)
                    .isEqualTo(producerConnections);
            assertThat(metric(consumer.metrics(), "connection-creation-total")).as(mechanism)
                    .isEqualTo(consumerConnections);
            assertThat(metric(producer.metrics(), "connection-close-total")).as(mechanism).isZero();
            assertThat(metric(consumer.metrics(), "connection-close-total")).as(mechanism).isZero();
            assertThat(metric(producer.metrics(), "successful-reauthentication-total")).as(mechanism)
                    .isGreaterThanOrEqualTo(2);
            assertThat(metric(consumer.metrics(), "successful-reauthentication-total")).as(mechanism)
                    .isGreaterThanOrEqualTo(2);
            assertThat(metric(producer.metrics(), "failed-reauthentication-total")).as(mechanism).isZero();
            assertThat(metric(consumer.metrics(), "failed-reauthentication-total")).as(mechanism).isZero();
            assertThat(metric(producer.metrics(), "reauthentication-latency-max")).as(mechanism).isLessThan(2000);
        }

        void close() {
            producer.close(Duration.ofSeconds(10));
            consumer.close(Duration.ofSeconds(10));
        }
    }

    @Tag(KafkaHalfInFaults.TAG)
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("kindsAndMechanisms")
    void aRawConnectionIsToldItsLifetimeMayReauthenticateAndIsClosedAtItsFirstRequestAfterIt(BrokerKind kind,
            String mechanism) throws Exception {
        // Given
        Node node = node(kind);
        try (RawKafkaClient client = RawKafkaClient.connect(node.host(), node.saslPort())) {
            SaslAuthenticateResponseData first = authenticate(client, mechanism, "alice");
            assertThat(first.errorCode()).isZero();
            assertThat(first.sessionLifetimeMs()).isEqualTo(MAX_REAUTH_MS);
            assertThat(metadata(client).brokers()).hasSize(1);
            // The broker closes an expired connection only when it reads a request from it
            assertThat(client.awaitClosed(Duration.ofMillis(2000))).isFalse();
            SaslAuthenticateResponseData again = authenticate(client, mechanism, "alice");
            assertThat(again.errorCode()).isZero();
            assertThat(again.sessionLifetimeMs()).isEqualTo(MAX_REAUTH_MS);
            assertThat(client.awaitClosed(Duration.ofMillis(1500))).isFalse();
            assertThat(metadata(client).brokers()).as("answered past the first session's end").hasSize(1);
            assertThat(client.awaitClosed(Duration.ofMillis(MAX_REAUTH_MS))).isFalse();

            // When: a request after the second session's end
            client.send(new MetadataRequestData().setTopics(List.of()), (short) 12);

            // Then
            assertThatThrownBy(() -> client.receiveFrame(TIMEOUT)).isInstanceOf(AssertionError.class)
                    .hasMessageContaining("closed the connection");
            assertThat(client.awaitClosed(TIMEOUT)).isTrue();
        }
    }

    @Tag(KafkaHalfInFaults.TAG)
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("kindsAndMechanisms")
    void reauthenticatingAsAnotherUserIsRefusedWithKafkasMessageAndClosed(BrokerKind kind, String mechanism)
            throws Exception {
        // Given
        Node node = node(kind);
        try (RawKafkaClient client = RawKafkaClient.connect(node.host(), node.saslPort())) {
            assertThat(authenticate(client, mechanism, "alice").errorCode()).isZero();

            // When
            SaslAuthenticateResponseData refused = authenticate(client, mechanism, "admin");

            // Then
            assertThat(refused.errorCode()).isEqualTo(org.apache.kafka.common.protocol.Errors
                    .SASL_AUTHENTICATION_FAILED.code());
            assertThat(refused.errorMessage())
                    .isEqualTo("Cannot change principals during re-authentication from User.alice: User.admin");
            assertThat(client.awaitClosed(TIMEOUT)).isTrue();
        }
    }

    @KafkaHalfInFaults
    void reauthenticatingWithAnotherMechanismIsClosedWithoutAnAnswer(BrokerKind kind) throws Exception {
        // Given
        Node node = node(kind);
        try (RawKafkaClient client = RawKafkaClient.connect(node.host(), node.saslPort())) {
            assertThat(authenticate(client, "PLAIN", "alice").errorCode()).isZero();
            SaslHandshakeResponseData handshake = client.sendAndReceive(new SaslHandshakeRequestData()
                    .setMechanism("SCRAM-SHA-256"), (short) 1, TIMEOUT);

            // When
            client.send(new SaslAuthenticateRequestData().setAuthBytes(new ScramClient(ScramMechanism.SCRAM_SHA_256,
                    "alice", "alice-secret").clientFirst()), (short) 2);

            // Then: the handshake is accepted (Kafka's REAUTH_BAD_MECHANISM), the exchange closed unanswered
            assertThat(handshake.errorCode()).isZero();
            assertThatThrownBy(() -> client.receiveFrame(TIMEOUT)).isInstanceOf(AssertionError.class)
                    .hasMessageContaining("closed the connection");
            assertThat(client.awaitClosed(TIMEOUT)).isTrue();
        }
    }

    // Waits out credential lifetimes (about 20-30 s a kind): both halves run with -Pfaults, keeping mvn verify short.
    @Tag("faults")
    @ParameterizedTest
    @EnumSource(BrokerKind.class)
    void followersReauthenticateOnASaslInterBrokerListenerAndKeepTheIsr(BrokerKind kind) throws Exception {
        // Given: three nodes whose inter-broker listener is SASL_PLAINTEXT (PLAIN, the brokers' own user from the
        // listener's JAAS config) with a session lifetime of 3000 ms for PLAIN on that listener
        int[] internalPorts = FreePorts.freePorts(3);
        String host = FreePorts.LOOPBACK;
        Map<String, String> config = new LinkedHashMap<>();
        config.put("listener.security.protocol.map", "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,"
                + "INTERNAL:SASL_PLAINTEXT");
        config.put("inter.broker.listener.name", "INTERNAL");
        config.put("sasl.mechanism.inter.broker.protocol", "PLAIN");
        config.put("listener.name.internal.sasl.enabled.mechanisms", "PLAIN");
        config.put("listener.name.internal.plain.sasl.jaas.config", PLAIN_MODULE + " required username=\"broker\""
                + " password=\"broker-secret\" user_broker=\"broker-secret\";");
        config.put("listener.name.internal.plain.connections.max.reauth.ms", String.valueOf(MAX_REAUTH_MS));
        config.put("offsets.topic.replication.factor", "3");
        int[] metricsPorts = FreePorts.freePorts(3);
        try (BrokerCluster cluster = BrokerCluster.create(kind, 3, config, n -> {
            String internal = host + ":" + internalPorts[n.nodeId() - 1];
            Map<String, String> node = new LinkedHashMap<>(Map.of("listeners", "PLAINTEXT://" + host + ":"
                    + n.clientPort() + ",CONTROLLER://" + host + ":" + n.controllerPort() + ",INTERNAL://" + internal,
                    "advertised.listeners", "PLAINTEXT://" + host + ":" + n.clientPort() + ",INTERNAL://" + internal));
            if (kind == BrokerKind.CAIRN) {
                node.put("metrics.port", String.valueOf(metricsPorts[n.nodeId() - 1]));
            }
            return node;
        })) {
            cluster.start();
            Properties props = new Properties();
            props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
            props.put(ProducerConfig.ACKS_CONFIG, "all");
            props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                    cluster.bootstrapServers()));
                    KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
                admin.createTopics(List.of(new NewTopic("replicated", 3, (short) 3))).all().get(30, TimeUnit.SECONDS);

                // When: acks=all records for four session lifetimes of the followers' connections
                long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(4 * MAX_REAUTH_MS);
                int sent = 0;
                while (System.nanoTime() < end) {
                    producer.send(new ProducerRecord<>("replicated", "r-" + sent++)).get(30, TimeUnit.SECONDS);
                }

                // Then: every replica stayed in sync, and no follower connection was closed for an expired session
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(admin
                        .describeTopics(List.of("replicated")).allTopicNames().get(10, TimeUnit.SECONDS)
                        .get("replicated").partitions()).allSatisfy(p -> assertThat(p.isr()).hasSize(3)));
                assertThat(sent).isGreaterThan(10);
            }
            for (BrokerProcess node : cluster.nodes()) {
                assertThat(node.logLinesContaining("Failed re-authentication")).isEmpty();
            }
            if (kind == BrokerKind.CAIRN) {
                // Every follower connection (two per node) re-authenticated, again and again. A fetch sent just
                // before the client's 85-95 % mark and read after the session's end (a GC pause on this shared
                // machine) is closed and reconnected, in Kafka as here, so those closes are bounded, not absent.
                double reauthenticated = 0;
                double expired = 0;
                for (int metricsPort : metricsPorts) {
                    String metrics = scrape(metricsPort);
                    reauthenticated += sample(metrics, "successful_reauthentication_total");
                    expired += sample(metrics, "expired_connections_killed_count");
                }
                System.out.printf("ReauthenticationIT inter-broker: %.0f re-authentications, %.0f expired-session "
                        + "closes%n", reauthenticated, expired);
                assertThat(reauthenticated).as("re-authentications on the INTERNAL listener").isGreaterThanOrEqualTo(6);
                assertThat(expired).as("expired-session closes, against %s re-authentications", reauthenticated)
                        .isLessThan(reauthenticated / 4);
            }
        }
    }

    private static String scrape(int metricsPort) throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + metricsPort + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        return response.body();
    }

    /** The value of {@code kafka_server_socket_server_metrics_<name>{listener="INTERNAL"}} in a scrape. */
    private static double sample(String metrics, String name) {
        String prefix = "kafka_server_socket_server_metrics_" + name + "{listener=\"INTERNAL\"} ";
        return metrics.lines().filter(line -> line.startsWith(prefix))
                .mapToDouble(line -> Double.parseDouble(line.substring(prefix.length()).trim())).sum();
    }

    /** SaslHandshake v1 and SaslAuthenticate v2 as {@code user}; the last SaslAuthenticate response. */
    private static SaslAuthenticateResponseData authenticate(RawKafkaClient client, String mechanism, String user)
            throws Exception {
        SaslHandshakeResponseData handshake = client.sendAndReceive(new SaslHandshakeRequestData()
                .setMechanism(mechanism), (short) 1, TIMEOUT);
        assertThat(handshake.errorCode()).as("handshake %s", mechanism).isZero();
        String password = USERS.get(user);
        if (mechanism.equals("PLAIN")) {
            byte[] token = ("\u0000" + user + "\u0000" + password).getBytes(StandardCharsets.UTF_8);
            return client.sendAndReceive(new SaslAuthenticateRequestData().setAuthBytes(token), (short) 2, TIMEOUT);
        }
        ScramClient scram = new ScramClient(ScramMechanism.forMechanismName(mechanism), user, password);
        SaslAuthenticateResponseData first = client.sendAndReceive(new SaslAuthenticateRequestData()
                .setAuthBytes(scram.clientFirst()), (short) 2, TIMEOUT);
        if (first.errorCode() != 0) {
            return first;
        }
        assertThat(first.sessionLifetimeMs()).as("no lifetime before the exchange completes").isZero();
        SaslAuthenticateResponseData last = client.sendAndReceive(new SaslAuthenticateRequestData()
                .setAuthBytes(scram.clientFinal(first.authBytes())), (short) 2, TIMEOUT);
        if (last.errorCode() == 0) {
            scram.verifyServerFinal(last.authBytes());
        }
        return last;
    }

    private static MetadataResponseData metadata(RawKafkaClient client) {
        return client.sendAndReceive(new MetadataRequestData().setTopics(List.of()), (short) 12, TIMEOUT);
    }

    private static void poll(KafkaConsumer<String, String> consumer, List<String> into) {
        for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(100))) {
            into.add(record.value());
        }
    }

    /** The client-wide value of {@code name} (the {@code producer-metrics}/{@code consumer-metrics} group). */
    private static double metric(Map<MetricName, ? extends Metric> metrics, String name) {
        return metrics.entrySet().stream()
                .filter(e -> e.getKey().name().equals(name) && e.getKey().group().endsWith("-metrics")
                        && !e.getKey().group().contains("node"))
                .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue()).sum();
    }
}
