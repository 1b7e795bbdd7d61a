package io.cairn.compat.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.cairn.compat.harness.KafkaHalfInFaults;
import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.FreePorts;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.KafkaDistribution;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
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
import org.apache.kafka.clients.admin.CreateDelegationTokenOptions;
import org.apache.kafka.clients.admin.DescribeDelegationTokenOptions;
import org.apache.kafka.clients.admin.ExpireDelegationTokenOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RenewDelegationTokenOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.errors.DelegationTokenOwnerMismatchException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.UnsupportedByAuthenticationException;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.token.delegation.DelegationToken;
import org.apache.kafka.common.security.token.delegation.TokenInformation;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Delegation tokens (KIP-48, KIP-373, KIP-900) on Cairn and Kafka 4.1.1 with the same configuration: one node with a
 * PLAINTEXT listener and a SASL_PLAINTEXT listener offering SCRAM-SHA-256/512, users alice, bob and carol from
 * {@code --add-scram} at format, {@code delegation.token.secret.key} set and a one-minute
 * {@code delegation.token.expiry.time.ms}. Alice creates a token naming bob as renewer; both describe it; a producer
 * and a consumer log in with it ({@code tokenauth=true}); token requests over that connection and over PLAINTEXT are
 * refused; carol may not renew it, bob renews it (its expiry moves on) and expires it at once, after which it is gone
 * from describe and a new login with it fails.
 */
@Timeout(240)
@ExtendWith(BrokerLogsExtension.class)
class DelegationTokenIT {

    /** The temp files and directories of this class's tests, removed after them. */
    @TempDir
    static Path tmp;

    private static final String SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule";
    private static final String TOPIC = "tokens";
    private static final Map<BrokerKind, Node> NODES = new EnumMap<>(BrokerKind.class);

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
        config.put("delegation.token.secret.key", "a-secret-shared-by-every-node");
        config.put("delegation.token.expiry.time.ms", "60000");
        config.put("offsets.topic.replication.factor", "1");
        BrokerCluster cluster = BrokerCluster.create(kind, 1, config, n -> Map.of(
                "listeners", "PLAINTEXT://" + host + ":" + n.clientPort() + ",CONTROLLER://" + host + ":"
                        + n.controllerPort() + ",SASL_PLAINTEXT://" + sasl,
                "advertised.listeners", "PLAINTEXT://" + host + ":" + n.clientPort() + ",SASL_PLAINTEXT://" + sasl),
                List.of("--add-scram", "SCRAM-SHA-256=[name=alice,password=alice-secret]",
                        "--add-scram", "SCRAM-SHA-256=[name=bob,password=bob-secret]",
                        "--add-scram", "SCRAM-SHA-256=[name=carol,password=carol-secret]"));
        try {
            cluster.start();
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                    cluster.bootstrapServers()))) {
                admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            }
        } catch (Exception | AssertionError e) {
            cluster.close();
            throw e;
        }
        Node node = new Node(cluster, cluster.bootstrapServers(), sasl);
        NODES.put(kind, node);
        return node;
    }

    /** A SASL_PLAINTEXT client logging in with SCRAM-SHA-256 as a user. */
    private static Properties user(Node node, String name, String password) {
        return scram(node, "username=\"" + name + "\" password=\"" + password + "\"");
    }

    /** A SASL_PLAINTEXT client logging in with SCRAM-SHA-256 and a delegation token. */
    private static Properties token(Node node, DelegationToken token) {
        return scram(node, "username=\"" + token.tokenInfo().tokenId() + "\" password=\""
                + Base64.getEncoder().encodeToString(token.hmac()) + "\" tokenauth=\"true\"");
    }

    private static Properties scram(Node node, String options) {
        Properties props = new Properties();
        props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, node.sasl());
        props.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
        props.put(SaslConfigs.SASL_MECHANISM, "SCRAM-SHA-256");
        props.put(SaslConfigs.SASL_JAAS_CONFIG, SCRAM_MODULE + " required " + options + ";");
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        return props;
    }

    private static List<TokenInformation> describe(Properties client) throws Exception {
        try (Admin admin = Admin.create(client)) {
            return admin.describeDelegationToken(new DescribeDelegationTokenOptions()).delegationTokens()
                    .get(30, TimeUnit.SECONDS).stream().map(DelegationToken::tokenInfo).toList();
        }
    }

    @KafkaHalfInFaults
    void aTokenIsCreatedDescribedUsedRenewedByItsRenewerAndExpired(BrokerKind kind) throws Exception {
        // Given: alice's token, bob its renewer
        Node node = node(kind);
        KafkaPrincipal bob = new KafkaPrincipal(KafkaPrincipal.USER_TYPE, "bob");
        DelegationToken token;
        try (Admin alice = Admin.create(user(node, "alice", "alice-secret"))) {
            token = alice.createDelegationToken(new CreateDelegationTokenOptions().renewers(List.of(bob)))
                    .delegationToken().get(30, TimeUnit.SECONDS);
        }
        TokenInformation info = token.tokenInfo();
        assertThat(info.owner()).isEqualTo(new KafkaPrincipal(KafkaPrincipal.USER_TYPE, "alice"));
        assertThat(info.tokenRequester()).isEqualTo(info.owner());
        assertThat(info.renewers()).containsExactly(bob);
        assertThat(token.hmac()).hasSize(64);
        assertThat(info.expiryTimestamp()).isEqualTo(info.issueTimestamp() + 60_000);
        assertThat(info.maxTimestamp()).isEqualTo(info.issueTimestamp() + 604_800_000L);

        // Then: the owner and the renewer see it, with its HMAC
        for (Properties client : List.of(user(node, "alice", "alice-secret"), user(node, "bob", "bob-secret"))) {
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(describe(client))
                    .extracting(TokenInformation::tokenId).contains(info.tokenId()));
        }

        // When: a producer and a consumer log in with the token
        produce(token(node, token), "t-", 3);
        List<String> read = consume(token(node, token), 3);

        // Then
        assertThat(read).containsExactly("t-0", "t-1", "t-2");

        // And: no token is made over a token-authenticated connection, nor over PLAINTEXT
        for (Properties client : List.of(token(node, token), plaintext(node))) {
            try (Admin admin = Admin.create(client)) {
                assertThatThrownBy(() -> admin.createDelegationToken().delegationToken().get(30, TimeUnit.SECONDS))
                        .isInstanceOf(ExecutionException.class)
                        .cause().isInstanceOf(UnsupportedByAuthenticationException.class);
            }
        }

        // When: carol tries to renew it, then bob renews it a while later
        try (Admin carol = Admin.create(user(node, "carol", "carol-secret"))) {
            assertThatThrownBy(() -> carol.renewDelegationToken(token.hmac()).expiryTimestamp()
                    .get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(DelegationTokenOwnerMismatchException.class);
        }
        Thread.sleep(1500);
        long renewedExpiry;
        try (Admin bobAdmin = Admin.create(user(node, "bob", "bob-secret"))) {
            renewedExpiry = bobAdmin.renewDelegationToken(token.hmac(), new RenewDelegationTokenOptions())
                    .expiryTimestamp().get(30, TimeUnit.SECONDS);
        }

        // Then: the expiry moved on, as describe shows
        assertThat(renewedExpiry).isGreaterThan(info.expiryTimestamp());
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(describe(user(node, "alice",
                "alice-secret"))).filteredOn(t -> t.tokenId().equals(info.tokenId()))
                .extracting(TokenInformation::expiryTimestamp).containsExactly(renewedExpiry));

        // When: bob expires it at once
        try (Admin bobAdmin = Admin.create(user(node, "bob", "bob-secret"))) {
            bobAdmin.expireDelegationToken(token.hmac(), new ExpireDelegationTokenOptions().expiryTimePeriodMs(-1))
                    .expiryTimestamp().get(30, TimeUnit.SECONDS);
        }

        // Then: it is gone and no longer logs in
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(describe(user(node, "alice",
                "alice-secret"))).extracting(TokenInformation::tokenId).doesNotContain(info.tokenId()));
        try (Admin admin = Admin.create(token(node, token))) {
            assertThatThrownBy(() -> admin.describeCluster().clusterId().get(30, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(SaslAuthenticationException.class)
                    .hasMessage("Authentication failed during authentication due to invalid credentials with SASL "
                            + "mechanism SCRAM-SHA-256");
        }
    }

    @KafkaHalfInFaults
    void kafkaDelegationTokensCreatesAndDescribesATokenAsOnKafka(BrokerKind kind) throws Exception {
        // Given: the tool's --command-config logging in as carol with SCRAM-SHA-256
        Node node = node(kind);
        Path commandConfig = Files.createTempFile(tmp, "delegation-tokens", ".properties");
        Files.writeString(commandConfig, "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"
                + "sasl.jaas.config=" + SCRAM_MODULE + " required username=\"carol\" password=\"carol-secret\";\n");

        // When
        JavaTool.Result created = tool(node, commandConfig, "--create", "--max-life-time-period", "-1",
                "--renewer-principal", "User:bob");

        // Then (the token reaches the broker's view through the metadata log, so describe may lag a moment on both)
        assertThat(created.exitCode()).as("%s", created).isZero();
        assertThat(created.stdout()).as("%s", created)
                .contains("Calling create token operation with renewers :[User:bob] , max-life-time-period :-1")
                .contains("Created delegation token with tokenId : ");
        String tokenId = created.stdout().lines().filter(l -> l.startsWith("Created delegation token with tokenId"))
                .findFirst().orElseThrow().substring("Created delegation token with tokenId : ".length()).trim();
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            JavaTool.Result described = tool(node, commandConfig, "--describe", "--owner-principal", "User:carol");
            assertThat(described.exitCode()).as("%s", described).isZero();
            assertThat(described.stdout()).as("%s", described)
                    .contains("Calling describe token operation for owners: [User:carol]")
                    .contains("Total number of tokens : 1")
                    .contains("TOKENID", "HMAC", "OWNER", "REQUESTER", "RENEWERS")
                    .contains(tokenId).contains("User:carol").contains("[User:bob]");
        });
        // Kafka's tool without --owner-principal sends an empty owner list, which Kafka answers with no tokens
        JavaTool.Result forCurrentUser = tool(node, commandConfig, "--describe");
        assertThat(forCurrentUser.stdout()).as("%s", forCurrentUser)
                .contains("Calling describe token operation for current user.", "Total number of tokens : 0");
    }

    private static JavaTool.Result tool(Node node, Path commandConfig, String... args) {
        List<String> all = new ArrayList<>(List.of("--bootstrap-server", node.sasl(), "--command-config",
                commandConfig.toString()));
        all.addAll(List.of(args));
        return KafkaDistribution.tool("org.apache.kafka.tools.DelegationTokenCommand").args(all)
                .timeout(Duration.ofSeconds(90)).build().run();
    }

    private static Properties plaintext(Node node) {
        Properties props = new Properties();
        props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, node.plaintext());
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        return props;
    }

    private static void produce(Properties props, String prefix, int count) throws Exception {
        Properties producerProps = new Properties();
        producerProps.putAll(props);
        producerProps.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        producerProps.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps)) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(TOPIC, prefix + i)).get(30, TimeUnit.SECONDS);
            }
        }
    }

    private static List<String> consume(Properties props, int count) {
        Properties consumerProps = new Properties();
        consumerProps.putAll(props);
        consumerProps.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        consumerProps.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps)) {
            TopicPartition partition = new TopicPartition(TOPIC, 0);
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
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
