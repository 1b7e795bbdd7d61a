package io.cairn.compat.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.cairn.compat.group.GroupClients;
import io.cairn.compat.harness.KafkaHalfInFaults;
import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.FreePorts;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.KafkaDistribution;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * ACLs as Kafka's standard authorizer enforces them, on Cairn and Kafka 4.1.1 with the same configuration: one node
 * per kind (shared by the cases) with {@code authorizer.class.name=org.apache.kafka.metadata.authorizer
 * .StandardAuthorizer}, a SASL_PLAINTEXT listener with PLAIN users admin (a super user), alice and bob, and the
 * harness's PLAINTEXT listener (its {@code User:ANONYMOUS} a super user too). The admin client adds, lists and removes
 * ACLs; bob, without them, may not; a stock producer and consumer are allowed exactly what alice's ACLs grant and
 * denied the rest with Kafka's exceptions.
 */
@Timeout(240)
@ExtendWith(BrokerLogsExtension.class)
class AclIT {

    private static final String PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule";
    private static final String BROKER_JAAS = PLAIN_MODULE + " required username=\"admin\" password=\"admin-secret\""
            + " user_admin=\"admin-secret\" user_alice=\"alice-secret\" user_bob=\"bob-secret\";";
    private static final Map<BrokerKind, Shared> CLUSTERS = new EnumMap<>(BrokerKind.class);

    /** One node of a kind and its SASL_PLAINTEXT address. */
    private record Shared(BrokerCluster cluster, String sasl) {
    }

    static Stream<BrokerKind> kinds() {
        return GroupClients.kinds();
    }

    @AfterAll
    static void stopClusters() {
        CLUSTERS.values().forEach(shared -> shared.cluster().close());
        CLUSTERS.clear();
    }

    private static synchronized Shared cluster(BrokerKind kind) throws Exception {
        Shared shared = CLUSTERS.get(kind);
        if (shared != null) {
            return shared;
        }
        String host = FreePorts.LOOPBACK;
        String sasl = host + ":" + FreePorts.freePorts(1)[0];
        Map<String, String> config = new LinkedHashMap<>();
        config.put("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
        config.put("super.users", "User:admin;User:ANONYMOUS");
        config.put("listener.security.protocol.map", "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,"
                + "SASL_PLAINTEXT:SASL_PLAINTEXT");
        config.put("sasl.enabled.mechanisms", "PLAIN");
        config.put("listener.name.sasl_plaintext.plain.sasl.jaas.config", BROKER_JAAS);
        config.put("offsets.topic.replication.factor", "1");
        config.put("transaction.state.log.replication.factor", "1");
        config.put("transaction.state.log.min.isr", "1");
        BrokerCluster cluster = BrokerCluster.create(kind, 1, config, node -> Map.of(
                "listeners", "PLAINTEXT://" + host + ":" + node.clientPort() + ",CONTROLLER://" + host + ":"
                        + node.controllerPort() + ",SASL_PLAINTEXT://" + sasl,
                "advertised.listeners", "PLAINTEXT://" + host + ":" + node.clientPort() + ",SASL_PLAINTEXT://"
                        + sasl));
        try {
            cluster.start();
        } catch (Exception | Error e) {
            cluster.close();
            throw e;
        }
        shared = new Shared(cluster, sasl);
        CLUSTERS.put(kind, shared);
        return shared;
    }

    private static Properties user(Shared shared, String name) {
        Properties props = new Properties();
        props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, shared.sasl());
        props.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
        props.put(SaslConfigs.SASL_MECHANISM, "PLAIN");
        props.put(SaslConfigs.SASL_JAAS_CONFIG, PLAIN_MODULE + " required username=\"" + name + "\" password=\""
                + name + "-secret\";");
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        return props;
    }

    private static AclBinding allow(ResourceType type, String name, PatternType pattern, String principal,
                                    AclOperation operation) {
        return new AclBinding(new ResourcePattern(type, name, pattern),
                new AccessControlEntry(principal, "*", operation, AclPermissionType.ALLOW));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kinds")
    void adminAddsListsAndRemovesAclsThatBobMayNotTouch(BrokerKind kind) throws Exception {
        // Given
        Shared shared = cluster(kind);
        AclBinding carolReads = allow(ResourceType.TOPIC, "acl-admin-", PatternType.PREFIXED, "User:carol",
                AclOperation.READ);
        AclBinding carolGroup = allow(ResourceType.GROUP, "acl-admin-group", PatternType.LITERAL, "User:carol",
                AclOperation.READ);
        AclBindingFilter carols = new AclBindingFilter(ResourcePatternFilter.ANY,
                new AccessControlEntryFilter("User:carol", null, AclOperation.ANY, AclPermissionType.ANY));
        try (Admin admin = Admin.create(user(shared, "admin")); Admin bob = Admin.create(user(shared, "bob"))) {
            // When
            admin.createAcls(List.of(carolReads, carolGroup)).all().get(30, TimeUnit.SECONDS);
            Collection<AclBinding> listed = awaitAcls(admin, carols, 2);
            Collection<AclBinding> matching = admin.describeAcls(new AclBindingFilter(new ResourcePatternFilter(
                    ResourceType.TOPIC, "acl-admin-x", PatternType.MATCH), AccessControlEntryFilter.ANY)).values()
                    .get(30, TimeUnit.SECONDS);
            Collection<AclBinding> removed = admin.deleteAcls(List.of(carols)).all().get(30, TimeUnit.SECONDS);

            // Then
            assertThat(listed).containsExactlyInAnyOrder(carolReads, carolGroup);
            assertThat(matching).contains(carolReads).doesNotContain(carolGroup);
            assertThat(removed).containsExactlyInAnyOrder(carolReads, carolGroup);
            assertThat(awaitAcls(admin, carols, 0)).isEmpty();
            assertThatThrownBy(() -> bob.createAcls(List.of(carolReads)).all().get(30, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class).cause().isInstanceOf(ClusterAuthorizationException.class);
            assertThatThrownBy(() -> bob.describeAcls(AclBindingFilter.ANY).values().get(30, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class).cause().isInstanceOf(ClusterAuthorizationException.class);
            assertThatThrownBy(() -> bob.deleteAcls(List.of(carols)).all().get(30, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class).cause().isInstanceOf(ClusterAuthorizationException.class);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kinds")
    void producerAndConsumerGetWhatTheAclsGrantAndNothingElse(BrokerKind kind) throws Exception {
        // Given: alice may write and read acl-data and use group acl-alice; bob has no ACL at all
        Shared shared = cluster(kind);
        try (Admin admin = Admin.create(user(shared, "admin"))) {
            admin.createTopics(List.of(new NewTopic("acl-data", 1, (short) 1), new NewTopic("acl-secret", 1,
                    (short) 1))).all().get(30, TimeUnit.SECONDS);
            admin.createAcls(List.of(
                    allow(ResourceType.TOPIC, "acl-data", PatternType.LITERAL, "User:alice", AclOperation.WRITE),
                    allow(ResourceType.TOPIC, "acl-data", PatternType.LITERAL, "User:alice", AclOperation.READ),
                    allow(ResourceType.GROUP, "acl-alice", PatternType.LITERAL, "User:alice", AclOperation.READ)))
                    .all().get(30, TimeUnit.SECONDS);
            awaitAcls(admin, new AclBindingFilter(ResourcePatternFilter.ANY, new AccessControlEntryFilter(
                    "User:alice", null, AclOperation.ANY, AclPermissionType.ANY)), 3);
        }

        // When: alice produces (idempotent, the default) and consumes in her group
        produce(user(shared, "alice"), "acl-data", 5, true);
        List<String> read = consume(user(shared, "alice"), "acl-data", "acl-alice", 5);
        Set<String> aliceSees;
        try (Admin alice = Admin.create(user(shared, "alice"))) {
            aliceSees = alice.listTopics().names().get(30, TimeUnit.SECONDS);
        }

        // Then
        assertThat(read).containsExactly("v0", "v1", "v2", "v3", "v4");
        assertThat(aliceSees).contains("acl-data").doesNotContain("acl-secret");
        // alice may not write a topic she has no ACL for, nor join a group she may not read
        assertThatThrownBy(() -> produce(user(shared, "alice"), "acl-secret", 1, false))
                .hasRootCauseInstanceOf(TopicAuthorizationException.class);
        assertThatThrownBy(() -> consume(user(shared, "alice"), "acl-data", "acl-bob", 1))
                .isInstanceOf(GroupAuthorizationException.class);
        // bob may do nothing
        assertThatThrownBy(() -> produce(user(shared, "bob"), "acl-data", 1, false))
                .hasRootCauseInstanceOf(TopicAuthorizationException.class);
        assertThatThrownBy(() -> consume(user(shared, "bob"), "acl-data", null, 1))
                .isInstanceOf(TopicAuthorizationException.class);
    }

    @KafkaHalfInFaults
    void kafkaAclsAddsListsAndRemovesAclsAsOnKafka(BrokerKind kind) throws Exception {
        // Given
        Shared shared = cluster(kind);
        AclBindingFilter daves = new AclBindingFilter(ResourcePatternFilter.ANY,
                new AccessControlEntryFilter("User:dave", null, AclOperation.ANY, AclPermissionType.ANY));

        // When: kafka-acls adds a read grant on a topic and a group, a host-scoped deny, and the --producer set
        // on a prefixed topic pattern and transactional id (--resource-pattern-type applies to both)
        JavaTool.Result read = kafkaAcls(shared, "--add", "--allow-principal", "User:dave", "--operation", "Read",
                "--topic", "cli-acl-in", "--group", "cli-acl-group");
        JavaTool.Result deny = kafkaAcls(shared, "--add", "--deny-principal", "User:dave", "--deny-host",
                "10.0.0.1", "--operation", "Write", "--topic", "cli-acl-in");
        JavaTool.Result producer = kafkaAcls(shared, "--add", "--producer", "--allow-principal", "User:dave",
                "--topic", "cli-acl-out-", "--resource-pattern-type", "prefixed", "--transactional-id",
                "cli-acl-tx");
        try (Admin admin = Admin.create(user(shared, "admin"))) {
            awaitAcls(admin, daves, 8);
        }
        JavaTool.Result listed = kafkaAcls(shared, "--list", "--principal", "User:dave");
        JavaTool.Result removed = kafkaAcls(shared, "--remove", "--force", "--topic", "cli-acl-in");
        try (Admin admin = Admin.create(user(shared, "admin"))) {
            awaitAcls(admin, daves, 6);
        }
        JavaTool.Result left = kafkaAcls(shared, "--list", "--principal", "User:dave");
        JavaTool.Result cleared = kafkaAcls(shared, "--remove", "--force", "--topic",
                "cli-acl-out-", "--resource-pattern-type", "prefixed", "--transactional-id", "cli-acl-tx");
        JavaTool.Result group = kafkaAcls(shared, "--remove", "--force", "--group", "cli-acl-group");

        // Then: each command exits 0 and --list prints every entry under its resource as Kafka does
        assertThat(List.of(read, deny, producer, listed, removed, left, cleared, group))
                .allSatisfy(result -> assertThat(result.exitCode()).as("%s", result).isZero());
        assertThat(read.stdout()).contains("Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, "
                + "name=cli-acl-in, patternType=LITERAL)`:", "(principal=User:dave, host=*, operation=READ, "
                + "permissionType=ALLOW)");
        Set<String> all = Set.of(
                "TOPIC:cli-acl-in:LITERAL (principal=User:dave, host=*, operation=READ, permissionType=ALLOW)",
                "TOPIC:cli-acl-in:LITERAL (principal=User:dave, host=10.0.0.1, operation=WRITE, "
                        + "permissionType=DENY)",
                "GROUP:cli-acl-group:LITERAL (principal=User:dave, host=*, operation=READ, permissionType=ALLOW)",
                "TOPIC:cli-acl-out-:PREFIXED (principal=User:dave, host=*, operation=WRITE, permissionType=ALLOW)",
                "TOPIC:cli-acl-out-:PREFIXED (principal=User:dave, host=*, operation=DESCRIBE, "
                        + "permissionType=ALLOW)",
                "TOPIC:cli-acl-out-:PREFIXED (principal=User:dave, host=*, operation=CREATE, permissionType=ALLOW)",
                "TRANSACTIONAL_ID:cli-acl-tx:PREFIXED (principal=User:dave, host=*, operation=WRITE, "
                        + "permissionType=ALLOW)",
                "TRANSACTIONAL_ID:cli-acl-tx:PREFIXED (principal=User:dave, host=*, operation=DESCRIBE, "
                        + "permissionType=ALLOW)");
        assertThat(aclLines(listed.stdout())).as("%s", listed).containsExactlyInAnyOrderElementsOf(all);
        assertThat(aclLines(left.stdout())).as("%s", left).containsExactlyInAnyOrderElementsOf(all.stream()
                .filter(line -> !line.startsWith("TOPIC:cli-acl-in:")).toList());
        try (Admin admin = Admin.create(user(shared, "admin"))) {
            assertThat(awaitAcls(admin, daves, 0)).isEmpty();
        }
    }

    private static JavaTool.Result kafkaAcls(Shared shared, String... args) {
        List<String> all = new ArrayList<>(List.of("--bootstrap-server",
                shared.cluster().bootstrapServers()));
        all.addAll(List.of(args));
        return KafkaDistribution.tool("org.apache.kafka.tools.AclCommand").args(all)
                .timeout(Duration.ofSeconds(90)).build().run();
    }

    /**
     * The entries {@code kafka-acls --list} printed, each as {@code TYPE:name:PATTERN (entry)}: a
     * {@code Current ACLs for resource `ResourcePattern(...)`:} line names the resource of the entry lines after it.
     */
    private static List<String> aclLines(String stdout) {
        Pattern resource = Pattern.compile(
                "ResourcePattern\\(resourceType=(\\w+), name=(.*), patternType=(\\w+)\\)");
        List<String> lines = new ArrayList<>();
        String current = null;
        for (String line : stdout.split("\n")) {
            Matcher matcher = resource.matcher(line);
            if (matcher.find()) {
                current = matcher.group(1) + ":" + matcher.group(2) + ":" + matcher.group(3);
            } else if (line.trim().startsWith("(principal=")) {
                lines.add(current + " " + line.trim());
            }
        }
        return lines;
    }

    /** The ACLs matching {@code filter} once there are {@code count} of them (the broker's image may lag). */
    private static Collection<AclBinding> awaitAcls(Admin admin, AclBindingFilter filter, int count) {
        List<Collection<AclBinding>> last = new ArrayList<>(List.of(List.of()));
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
            last.set(0, admin.describeAcls(filter).values().get(30, TimeUnit.SECONDS));
            assertThat(last.get(0)).hasSize(count);
        });
        return last.get(0);
    }

    private static void produce(Properties props, String topic, int count, boolean idempotent) throws Exception {
        Properties producerProps = new Properties();
        producerProps.putAll(props);
        producerProps.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, String.valueOf(idempotent));
        producerProps.put(ProducerConfig.ACKS_CONFIG, idempotent ? "all" : "1");
        producerProps.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "20000");
        producerProps.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        producerProps.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps)) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(topic, "v" + i)).get(30, TimeUnit.SECONDS);
            }
        }
    }

    /**
     * Reads {@code count} records from the beginning: subscribed in {@code group}, or assigned to partition 0
     * without a group when it is null. An authorization failure is thrown as the consumer throws it.
     */
    private static List<String> consume(Properties props, String topic, String group, int count) {
        Properties consumerProps = new Properties();
        consumerProps.putAll(props);
        consumerProps.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        consumerProps.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        consumerProps.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        if (group != null) {
            consumerProps.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        }
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps)) {
            if (group != null) {
                consumer.subscribe(List.of(topic));
            } else {
                List<TopicPartition> partitions = List.of(new TopicPartition(topic, 0));
                consumer.assign(partitions);
                consumer.seekToBeginning(partitions);
            }
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
