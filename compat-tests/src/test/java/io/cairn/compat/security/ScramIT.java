package io.cairn.compat.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.cairn.compat.harness.KafkaHalfInFaults;
import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.FreePorts;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.KafkaDistribution;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.UserScramCredentialAlteration;
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.admin.UserScramCredentialsDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.errors.DuplicateResourceException;
import org.apache.kafka.common.errors.ResourceNotFoundException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.UnacceptableCredentialException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * SASL/SCRAM as Kafka serves it, on Cairn and Kafka 4.1.1 with the same configuration: one node (started once per
 * kind and shared by the cases) with a PLAINTEXT listener, where the credentials are managed, and a SASL_PLAINTEXT
 * listener offering SCRAM-SHA-256 and SCRAM-SHA-512 with Kafka's {@code ScramLoginModule}. Users are created with
 * {@code kafka-configs --add-config 'SCRAM-SHA-256=[iterations=8192,password=...]'} and
 * {@code Admin.alterUserScramCredentials}; the stock producer and consumer authenticate with both mechanisms; a
 * wrong password and an unknown user fail with the same {@link SaslAuthenticationException} and Kafka's message;
 * describe shows mechanisms and iterations; invalid alterations get Kafka's exceptions; a deleted credential no
 * longer authenticates. A 3-node cluster formatted with {@code --add-scram} for the brokers' own user replicates
 * over a SASL_PLAINTEXT inter-broker listener with {@code sasl.mechanism.inter.broker.protocol=SCRAM-SHA-256}.
 */
@Timeout(180)
@ExtendWith(BrokerLogsExtension.class)
class ScramIT {

    private static final String SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule";
    private static final String CONFIG_TOOL = "kafka.admin.ConfigCommand";
    private static final Map<BrokerKind, Node> NODES = new EnumMap<>(BrokerKind.class);

    /** A started node: its cluster, the PLAINTEXT bootstrap and the SASL_PLAINTEXT address. */
    private record Node(BrokerCluster cluster, String plaintext, String sasl) {
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
        String sasl = host + ":" + FreePorts.freePorts(1)[0];
        Map<String, String> config = new LinkedHashMap<>();
        config.put("listener.security.protocol.map", "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,"
                + "SASL_PLAINTEXT:SASL_PLAINTEXT");
        config.put("sasl.enabled.mechanisms", "SCRAM-SHA-256,SCRAM-SHA-512");
        config.put("listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config", SCRAM_MODULE + " required;");
        config.put("listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config", SCRAM_MODULE + " required;");
        config.put("offsets.topic.replication.factor", "1");
        config.put("transaction.state.log.replication.factor", "1");
        config.put("transaction.state.log.min.isr", "1");
        BrokerCluster cluster = BrokerCluster.create(kind, 1, config, n -> Map.of(
                "listeners", "PLAINTEXT://" + host + ":" + n.clientPort() + ",CONTROLLER://" + host + ":"
                        + n.controllerPort() + ",SASL_PLAINTEXT://" + sasl,
                "advertised.listeners", "PLAINTEXT://" + host + ":" + n.clientPort() + ",SASL_PLAINTEXT://" + sasl));
        try {
            cluster.start();
            try (Admin admin = admin(cluster.bootstrapServers())) {
                admin.createTopics(List.of(new NewTopic("scram", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            }
        } catch (Exception | AssertionError e) {
            cluster.close();
            throw e;
        }
        Node node = new Node(cluster, cluster.bootstrapServers(), sasl);
        NODES.put(kind, node);
        return node;
    }

    private static Admin admin(String bootstrap) {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
    }

    /** A SASL_PLAINTEXT client authenticating with {@code mechanism}. */
    private static Properties client(Node node, String mechanism, String user, String password) {
        Properties props = new Properties();
        props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, node.sasl());
        props.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
        props.put(SaslConfigs.SASL_MECHANISM, mechanism);
        props.put(SaslConfigs.SASL_JAAS_CONFIG, SCRAM_MODULE + " required username=\"" + user + "\" password=\""
                + password + "\";");
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        return props;
    }

    private static JavaTool.Result kafkaConfigs(Node node, String... args) {
        List<String> all = new ArrayList<>(List.of("--bootstrap-server", node.plaintext()));
        all.addAll(List.of(args));
        return KafkaDistribution.tool(CONFIG_TOOL).args(all).timeout(Duration.ofSeconds(90)).build().run();
    }

    /** Waits until the broker's describe shows {@code user} with exactly {@code mechanisms}. */
    private static UserScramCredentialsDescription awaitCredentials(Node node, String user,
            ScramMechanism... mechanisms) {
        try (Admin admin = admin(node.plaintext())) {
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(admin
                    .describeUserScramCredentials(List.of(user)).description(user).get(10, TimeUnit.SECONDS)
                    .credentialInfos()).extracting(ScramCredentialInfo::mechanism).containsExactlyInAnyOrder(
                            mechanisms));
            try {
                return admin.describeUserScramCredentials(List.of(user)).description(user).get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }
    }

    private static void alter(Node node, UserScramCredentialAlteration... alterations) throws Exception {
        try (Admin admin = admin(node.plaintext())) {
            admin.alterUserScramCredentials(List.of(alterations)).all().get(30, TimeUnit.SECONDS);
        }
    }

    @KafkaHalfInFaults
    void usersMadeByKafkaConfigsAndAdminAuthenticateWithScramSha256AndScramSha512(BrokerKind kind) throws Exception {
        // Given: alice's SCRAM-SHA-256 credential from kafka-configs, her SCRAM-SHA-512 one from the Admin client
        Node node = node(kind);
        JavaTool.Result added = kafkaConfigs(node, "--alter", "--entity-type", "users", "--entity-name", "alice",
                "--add-config", "SCRAM-SHA-256=[iterations=8192,password=alice-secret]");
        assertThat(added.exitCode()).as("%s", added).isZero();
        assertThat(added.stdout()).as("%s", added).contains("Completed updating config for user alice.");
        alter(node, new UserScramCredentialUpsertion("alice", new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512,
                4096), "alice-secret-512"));
        UserScramCredentialsDescription described = awaitCredentials(node, "alice", ScramMechanism.SCRAM_SHA_256,
                ScramMechanism.SCRAM_SHA_512);

        // When: she produces with SCRAM-SHA-256 and reads back with SCRAM-SHA-512
        produce(client(node, "SCRAM-SHA-256", "alice", "alice-secret"), "sha256-", 5);
        produce(client(node, "SCRAM-SHA-512", "alice", "alice-secret-512"), "sha512-", 5);
        List<String> read = consume(client(node, "SCRAM-SHA-512", "alice", "alice-secret-512"), 10);

        // Then
        assertThat(read).contains("sha256-0", "sha256-4", "sha512-0", "sha512-4");
        assertThat(described.credentialInfos()).containsExactlyInAnyOrder(
                new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 8192),
                new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096));
    }

    @KafkaHalfInFaults
    void aWrongPasswordAnUnknownUserAndTheWrongMechanismFailAlikeWithKafkasMessage(BrokerKind kind)
            throws Exception {
        // Given
        Node node = node(kind);
        alter(node, new UserScramCredentialUpsertion("bob", new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256,
                4096), "bob-secret"));
        awaitCredentials(node, "bob", ScramMechanism.SCRAM_SHA_256);

        // When / Then
        for (Properties bad : List.of(client(node, "SCRAM-SHA-256", "bob", "wrong"),
                client(node, "SCRAM-SHA-256", "mallory", "bob-secret"),
                client(node, "SCRAM-SHA-512", "bob", "bob-secret"))) {
            String mechanism = bad.getProperty(SaslConfigs.SASL_MECHANISM);
            try (Admin admin = Admin.create(bad)) {
                assertThatThrownBy(() -> admin.describeCluster().clusterId().get(30, TimeUnit.SECONDS))
                        .isInstanceOf(ExecutionException.class)
                        .cause().isInstanceOf(SaslAuthenticationException.class)
                        .hasMessage("Authentication failed during authentication due to invalid credentials with "
                                + "SASL mechanism " + mechanism);
            }
        }
        try (Admin admin = Admin.create(client(node, "SCRAM-SHA-256", "bob", "bob-secret"))) {
            assertThat(admin.describeCluster().clusterId().get(30, TimeUnit.SECONDS)).isNotBlank();
        }
    }

    @KafkaHalfInFaults
    void invalidAlterationsAndDescribesGetKafkasErrorsAndADeletedCredentialNoLongerAuthenticates(BrokerKind kind)
            throws Exception {
        // Given
        Node node = node(kind);
        alter(node, new UserScramCredentialUpsertion("carol", new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256,
                4096), "carol-secret"));
        awaitCredentials(node, "carol", ScramMechanism.SCRAM_SHA_256);
        produce(client(node, "SCRAM-SHA-256", "carol", "carol-secret"), "carol-", 1);

        try (Admin admin = admin(node.plaintext())) {
            // When: too many iterations, a missing credential deleted, one user altered twice (Kafka counts alterations
        // per user, whatever the mechanism), an unknown user described
            var tooMany = admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion("dave",
                    new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 16385), "d"))).all();
            var missing = admin.alterUserScramCredentials(List.of(new UserScramCredentialDeletion("carol",
                    ScramMechanism.SCRAM_SHA_512))).all();
            var twice = admin.alterUserScramCredentials(List.<UserScramCredentialAlteration>of(
                    new UserScramCredentialUpsertion("erin", new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256,
                            4096), "e"), new UserScramCredentialUpsertion("erin", new ScramCredentialInfo(
                            ScramMechanism.SCRAM_SHA_512, 4096), "e"))).all();
            var unknown = admin.describeUserScramCredentials(List.of("nobody")).description("nobody");

            // Then
            assertThatThrownBy(() -> tooMany.get(30, TimeUnit.SECONDS)).cause()
                    .isInstanceOf(UnacceptableCredentialException.class).hasMessage("Too many iterations");
            assertThatThrownBy(() -> missing.get(30, TimeUnit.SECONDS)).cause()
                    .isInstanceOf(ResourceNotFoundException.class)
                    .hasMessage("Attempt to delete a user credential that does not exist");
            assertThatThrownBy(() -> twice.get(30, TimeUnit.SECONDS)).cause()
                    .isInstanceOf(DuplicateResourceException.class)
                    .hasMessage("A user credential cannot be altered twice in the same request");
            assertThatThrownBy(() -> unknown.get(30, TimeUnit.SECONDS)).cause()
                    .isInstanceOf(ResourceNotFoundException.class)
                    .hasMessage("Attempt to describe a user credential that does not exist: nobody");
        }

        // When: carol's credential is deleted with kafka-configs
        JavaTool.Result deleted = kafkaConfigs(node, "--alter", "--entity-type", "users", "--entity-name", "carol",
                "--delete-config", "SCRAM-SHA-256");

        // Then: describe no longer finds her, and she can no longer authenticate
        assertThat(deleted.exitCode()).as("%s", deleted).isZero();
        try (Admin admin = admin(node.plaintext())) {
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThatThrownBy(() -> admin
                    .describeUserScramCredentials(List.of("carol")).description("carol").get(10, TimeUnit.SECONDS))
                    .cause().isInstanceOf(ResourceNotFoundException.class));
        }
        try (Admin admin = Admin.create(client(node, "SCRAM-SHA-256", "carol", "carol-secret"))) {
            assertThatThrownBy(() -> admin.describeCluster().clusterId().get(30, TimeUnit.SECONDS))
                    .cause().isInstanceOf(SaslAuthenticationException.class);
        }
    }

    @KafkaHalfInFaults
    void aClusterFormattedWithAddScramReplicatesOverAScramInterBrokerListener(BrokerKind kind) throws Exception {
        // Given: three nodes formatted with --add-scram for the brokers' own user, whose inter-broker listener
        // INTERNAL is SASL_PLAINTEXT with sasl.mechanism.inter.broker.protocol=SCRAM-SHA-256
        int[] internalPorts = FreePorts.freePorts(3);
        String host = FreePorts.LOOPBACK;
        Map<String, String> config = new LinkedHashMap<>();
        config.put("listener.security.protocol.map",
                "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,INTERNAL:SASL_PLAINTEXT");
        config.put("inter.broker.listener.name", "INTERNAL");
        config.put("sasl.mechanism.inter.broker.protocol", "SCRAM-SHA-256");
        config.put("listener.name.internal.sasl.enabled.mechanisms", "SCRAM-SHA-256");
        config.put("listener.name.internal.scram-sha-256.sasl.jaas.config", SCRAM_MODULE
                + " required username=\"broker\" password=\"broker-secret\";");
        config.put("offsets.topic.replication.factor", "3");
        long begin = System.nanoTime();
        try (BrokerCluster cluster = BrokerCluster.create(kind, 3, config, node -> {
            String internal = host + ":" + internalPorts[node.nodeId() - 1];
            return Map.of("listeners", "PLAINTEXT://" + host + ":" + node.clientPort() + ",CONTROLLER://" + host
                            + ":" + node.controllerPort() + ",INTERNAL://" + internal,
                    "advertised.listeners", "PLAINTEXT://" + host + ":" + node.clientPort() + ",INTERNAL://"
                            + internal);
        }, List.of("--add-scram", "SCRAM-SHA-256=[name=broker,password=broker-secret]"))) {
            cluster.start();
            try (Admin admin = admin(cluster.bootstrapServers())) {
                admin.createTopics(List.of(new NewTopic("scram", 3, (short) 3))).all().get(30, TimeUnit.SECONDS);
            }
            Properties plaintext = new Properties();
            plaintext.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());

            // When: acks=all records, through the PLAINTEXT client listener
            produce(plaintext, "r-", 30);

            // Then: every partition has its three replicas in sync (the followers authenticated with SCRAM)
            try (Admin admin = admin(cluster.bootstrapServers())) {
                assertThat(admin.describeUserScramCredentials(List.of("broker")).description("broker")
                        .get(10, TimeUnit.SECONDS).credentialInfos()).containsExactly(
                                new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096));
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                    TopicDescription topic = admin.describeTopics(List.of("scram")).allTopicNames()
                            .get(10, TimeUnit.SECONDS).get("scram");
                    assertThat(topic.partitions()).hasSize(3).allSatisfy(p -> assertThat(p.isr()).hasSize(3));
                });
            }
            assertThat(consume(plaintext, 30)).hasSize(30);
            for (BrokerProcess node : cluster.nodes()) {
                if (kind == BrokerKind.CAIRN) {
                    assertThat(node.logLinesContaining("Inter-broker clients authenticate with SASL/SCRAM-SHA-256"))
                            .isNotEmpty();
                }
                assertThat(node.logLinesContaining("Failed authentication")).isEmpty();
            }
            System.out.printf("ScramIT %s 3-node SCRAM-SHA-256 inter-broker: %d ms%n", kind,
                    (System.nanoTime() - begin) / 1_000_000);
        }
    }

    private static void produce(Properties props, String prefix, int count) throws Exception {
        Properties producerProps = new Properties();
        producerProps.putAll(props);
        producerProps.put(ProducerConfig.ACKS_CONFIG, "all");
        producerProps.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        producerProps.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps)) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>("scram", prefix + i)).get(30, TimeUnit.SECONDS);
            }
        }
    }

    /** Reads at least {@code count} records of every partition of the topic from the beginning (no group). */
    private static List<String> consume(Properties props, int count) {
        Properties consumerProps = new Properties();
        consumerProps.putAll(props);
        consumerProps.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        consumerProps.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps)) {
            List<TopicPartition> partitions = consumer.partitionsFor("scram", Duration.ofSeconds(30)).stream()
                    .map(p -> new TopicPartition("scram", p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (values.size() < count && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                    values.add(record.value());
                }
            }
        }
        return values;
    }
}
