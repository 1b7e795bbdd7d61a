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
import io.cairn.testkit.TestCertificates;
import io.cairn.testkit.TestDirectories;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A cluster secured as a deployment would be, on Cairn and Kafka 4.1.1 with the same files: three combined nodes
 * whose brokers replicate over a SASL_SSL inter-broker listener (SCRAM-SHA-512 as the super user {@code broker}),
 * clients on a SASL_SSL listener (SCRAM-SHA-256), every SCRAM credential formatted into the storage with
 * {@code --add-scram}, Kafka's {@code StandardAuthorizer} with no access unless an ACL grants it, and the controller
 * listener on SASL_SSL ({@code CONTROLLER:SASL_SSL}, {@code sasl.mechanism.controller.protocol=PLAIN}, the same
 * stores): the Raft quorum and the brokers' registrations and heartbeats go over it, authenticated as the super user
 * {@code controller} (Kafka's controllers authorize them; Cairn's quorum fronts let only super users through). The
 * harness's PLAINTEXT listener is used only to see the nodes start.
 *
 * <p>The admin grants alice a transactional id and writes to {@code orders}, bob reads of it in his group; alice runs
 * transactions (two committed of three) at acks=all while the leader of a partition is killed with SIGKILL and
 * restarted; bob's read_committed group then reads every committed record once and no aborted one. An unknown
 * password fails authentication and bob may not write.
 */
@Timeout(300)
@ExtendWith(BrokerLogsExtension.class)
class SecuredClusterIT {

    private static final String SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule";
    private static final String PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule";
    private static final String TOPIC = "orders";
    private static final String GROUP = "orders-readers";
    private static final String TRANSACTIONAL_ID = "orders-tx";
    private static final int TRANSACTIONS = 30;
    private static final int RECORDS_PER_TRANSACTION = 5;

    private static Path dir;
    private static TestCertificates certs;

    @BeforeAll
    static void makeCertificates() {
        dir = TestDirectories.createTempDirectory("cairn-secured-cluster-it-");
        certs = TestCertificates.create(dir.resolve("certs"));
    }

    @AfterAll
    static void deleteCertificates() {
        TestDirectories.deleteRecursively(dir);
    }

    @KafkaHalfInFaults
    void transactionsSurviveALeaderKilledOnASecuredClusterAndEachUserGetsOnlyWhatItsAclsGrant(BrokerKind kind)
            throws Exception {
        // Given: three nodes, SASL_SSL between brokers, to clients and on the controller listener, the
        // standard authorizer, SCRAM users formatted
        int[] internalPorts = FreePorts.freePorts(3);
        int[] clientPorts = FreePorts.freePorts(3);
        String host = FreePorts.LOOPBACK;
        long begin = System.nanoTime();
        try (BrokerCluster cluster = BrokerCluster.create(kind, 3, config(), node -> {
            String internal = host + ":" + internalPorts[node.nodeId() - 1];
            String client = host + ":" + clientPorts[node.nodeId() - 1];
            return Map.of("listeners", "PLAINTEXT://" + host + ":" + node.clientPort() + ",CONTROLLER://" + host
                            + ":" + node.controllerPort() + ",INTERNAL://" + internal + ",CLIENT://" + client,
                    "advertised.listeners", "PLAINTEXT://" + host + ":" + node.clientPort() + ",INTERNAL://"
                            + internal + ",CLIENT://" + client);
        }, List.of("--add-scram", "SCRAM-SHA-512=[name=broker,password=broker-secret]",
                "--add-scram", "SCRAM-SHA-256=[name=admin,password=admin-secret]",
                "--add-scram", "SCRAM-SHA-256=[name=alice,password=alice-secret]",
                "--add-scram", "SCRAM-SHA-256=[name=bob,password=bob-secret]"))) {
            cluster.start();
            String bootstrap = host + ":" + clientPorts[0] + "," + host + ":" + clientPorts[1];
            try (Admin admin = Admin.create(user(bootstrap, "admin"))) {
                admin.createTopics(List.of(new NewTopic(TOPIC, 3, (short) 3)
                        .configs(Map.of("min.insync.replicas", "2")))).all().get(60, TimeUnit.SECONDS);
                admin.createAcls(List.of(
                        allow(ResourceType.TOPIC, TOPIC, "User:alice", AclOperation.WRITE),
                        allow(ResourceType.TRANSACTIONAL_ID, TRANSACTIONAL_ID, "User:alice", AclOperation.WRITE),
                        allow(ResourceType.TOPIC, TOPIC, "User:bob", AclOperation.READ),
                        allow(ResourceType.GROUP, GROUP, "User:bob", AclOperation.READ)))
                        .all().get(30, TimeUnit.SECONDS);

                // When: alice's transactions, the leader of partition 0 killed and restarted half way
                List<String> committed = new ArrayList<>();
                try (KafkaProducer<String, String> producer = initialized(bootstrap)) {
                    for (int t = 0; t < TRANSACTIONS; t++) {
                        if (t == TRANSACTIONS / 2) {
                            bounceLeaderOfPartitionZero(cluster, admin);
                        }
                        producer.beginTransaction();
                        List<String> values = new ArrayList<>();
                        for (int r = 0; r < RECORDS_PER_TRANSACTION; r++) {
                            String value = "t" + t + "-r" + r;
                            values.add(value);
                            producer.send(new ProducerRecord<>(TOPIC, r % 3, null, value));
                        }
                        if (t % 3 == 2) {
                            producer.abortTransaction();
                        } else {
                            producer.commitTransaction();
                            committed.addAll(values);
                        }
                    }
                }

                // Then: every ISR is full again, and bob's read_committed group reads each committed record once
                await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(250)).ignoreExceptions()
                        .untilAsserted(() -> {
                            TopicDescription topic = admin.describeTopics(List.of(TOPIC)).allTopicNames()
                                    .get(10, TimeUnit.SECONDS).get(TOPIC);
                            assertThat(topic.partitions()).allSatisfy(p -> assertThat(p.isr()).hasSize(3));
                        });
                List<String> read = readCommittedInGroup(bootstrap, committed.size());
                assertThat(read).as("bob's read_committed group").hasSameSizeAs(committed)
                        .containsExactlyInAnyOrderElementsOf(committed);
            }

            // And: a wrong password fails authentication; bob may read but not write
            Properties mallory = user(bootstrap, "bob");
            mallory.put(SaslConfigs.SASL_JAAS_CONFIG, SCRAM_MODULE
                    + " required username=\"bob\" password=\"not-bobs\";");
            try (Admin admin = Admin.create(mallory)) {
                assertThatThrownBy(() -> admin.describeCluster().clusterId().get(30, TimeUnit.SECONDS))
                        .cause().isInstanceOf(SaslAuthenticationException.class);
            }
            // (an idempotent producer needs IdempotentWrite on the cluster or Write on some topic: bob has neither)
            Properties bob = user(bootstrap, "bob");
            bob.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "20000");
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(bob, new StringSerializer(),
                    new StringSerializer())) {
                assertThatThrownBy(() -> producer.send(new ProducerRecord<>(TOPIC, "bob")).get(30, TimeUnit.SECONDS))
                        .cause().isInstanceOf(ClusterAuthorizationException.class);
            }
            bob.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
            bob.put(ProducerConfig.ACKS_CONFIG, "1");
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(bob, new StringSerializer(),
                    new StringSerializer())) {
                assertThatThrownBy(() -> producer.send(new ProducerRecord<>(TOPIC, "bob")).get(30, TimeUnit.SECONDS))
                        .cause().isInstanceOf(TopicAuthorizationException.class);
            }
            for (BrokerProcess node : cluster.nodes()) {
                if (kind == BrokerKind.CAIRN) {
                    assertThat(node.logLinesContaining("Inter-broker clients authenticate with SASL/SCRAM-SHA-512"))
                            .isNotEmpty();
                    assertThat(node.logLinesContaining("the quorum speaks SASL_SSL with SASL/PLAIN as controller"))
                            .isNotEmpty();
                }
            }
            System.out.printf("SecuredClusterIT %s: %d ms%n", kind, (System.nanoTime() - begin) / 1_000_000);
        }
    }

    /**
     * Every node's settings: SASL_SSL inter-broker and client listeners, SCRAM, SASL_SSL with PLAIN on the
     * controller listener, the standard authorizer.
     */
    private static Map<String, String> config() {
        Map<String, String> config = new LinkedHashMap<>(certs.brokerStoreConfig());
        config.put("listener.security.protocol.map",
                "CONTROLLER:SASL_SSL,PLAINTEXT:PLAINTEXT,INTERNAL:SASL_SSL,CLIENT:SASL_SSL");
        config.put("sasl.mechanism.controller.protocol", "PLAIN");
        config.put("listener.name.controller.sasl.enabled.mechanisms", "PLAIN");
        config.put("listener.name.controller.plain.sasl.jaas.config", PLAIN_MODULE
                + " required username=\"controller\" password=\"controller-secret\" "
                + "user_controller=\"controller-secret\";");
        config.put("inter.broker.listener.name", "INTERNAL");
        config.put("sasl.mechanism.inter.broker.protocol", "SCRAM-SHA-512");
        config.put("listener.name.internal.sasl.enabled.mechanisms", "SCRAM-SHA-512");
        config.put("listener.name.internal.scram-sha-512.sasl.jaas.config", SCRAM_MODULE
                + " required username=\"broker\" password=\"broker-secret\";");
        config.put("listener.name.client.sasl.enabled.mechanisms", "SCRAM-SHA-256");
        config.put("listener.name.client.scram-sha-256.sasl.jaas.config", SCRAM_MODULE + " required;");
        config.put("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
        config.put("allow.everyone.if.no.acl.found", "false");
        config.put("super.users", "User:broker;User:admin;User:controller");
        config.put("offsets.topic.replication.factor", "3");
        config.put("transaction.state.log.replication.factor", "3");
        config.put("transaction.state.log.min.isr", "2");
        config.put("replica.lag.time.max.ms", "5000");
        return config;
    }

    private static void bounceLeaderOfPartitionZero(BrokerCluster cluster, Admin admin) throws Exception {
        TopicDescription topic = admin.describeTopics(List.of(TOPIC)).allTopicNames().get(30, TimeUnit.SECONDS)
                .get(TOPIC);
        BrokerProcess leader = cluster.node(topic.partitions().get(0).leader().id());
        leader.kill();
        cluster.startNode(leader);
    }

    private static Properties user(String bootstrap, String name) {
        Properties props = new Properties();
        props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_SSL");
        props.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "PEM");
        props.put(SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, certs.caPem().toString());
        props.put(SaslConfigs.SASL_MECHANISM, "SCRAM-SHA-256");
        props.put(SaslConfigs.SASL_JAAS_CONFIG, SCRAM_MODULE + " required username=\"" + name + "\" password=\""
                + name + "-secret\";");
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "60000");
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
        return props;
    }

    /**
     * Alice's transactional producer, initialized. ACLs reach the brokers asynchronously after CreateAcls answers,
     * on Kafka as on Cairn, so an authorization failure is retried for a while with a new producer (the failed one
     * cannot go on).
     */
    private static KafkaProducer<String, String> initialized(String bootstrap) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            KafkaProducer<String, String> producer = new KafkaProducer<>(transactional(bootstrap));
            try {
                producer.initTransactions();
                return producer;
            } catch (TransactionalIdAuthorizationException e) {
                producer.close(Duration.ZERO);
                if (System.nanoTime() > deadline) {
                    throw e;
                }
            }
        }
    }

    private static Properties transactional(String bootstrap) {
        Properties props = user(bootstrap, "alice");
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, TRANSACTIONAL_ID);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "120000");
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "120000");
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return props;
    }

    /** Bob's read_committed consumer in {@value #GROUP}: reads until {@code count} records or 90 s have passed. */
    private static List<String> readCommittedInGroup(String bootstrap, int count) {
        Properties props = user(bootstrap, "bob");
        props.put(ConsumerConfig.GROUP_ID_CONFIG, GROUP);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            consumer.subscribe(List.of(TOPIC));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            // Past count, one more second of polling shows any record read twice or that should not be there.
            long extra = Long.MAX_VALUE;
            while (System.nanoTime() < Math.min(deadline, extra)) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                    values.add(record.value());
                }
                if (values.size() >= count && extra == Long.MAX_VALUE) {
                    extra = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
                }
            }
            consumer.commitSync(Duration.ofSeconds(30));
        } catch (KafkaException e) {
            throw new AssertionError("bob's consumer failed after " + values.size() + " records", e);
        }
        return values;
    }

    private static AclBinding allow(ResourceType type, String name, String principal, AclOperation operation) {
        return new AclBinding(new ResourcePattern(type, name, PatternType.LITERAL),
                new AccessControlEntry(principal, "*", operation, AclPermissionType.ALLOW));
    }
}
