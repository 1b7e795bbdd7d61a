package io.cairn.compat.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.cairn.compat.group.GroupClients;
import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.KafkaDistribution;
import io.cairn.testkit.RawKafkaClient;
import io.cairn.wire.message.MetadataRequestData;
import io.cairn.wire.message.RequestHeaderData;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterClientQuotasOptions;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.DeleteTopicsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.ThrottlingQuotaExceededException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Client quotas as Kafka 4.1 serves them, on Cairn and Kafka 4.1.1 alike: one node per kind (started once and shared
 * by the cases, with {@code quota.window.num=2} so a rate settles within a second instead of ten).
 * {@code Admin.alterClientQuotas}/{@code describeClientQuotas} round trips (users, user and client id, defaults with
 * {@code validateOnly}, strict and non-strict filters, removal), Kafka's exceptions and messages for bad entities,
 * keys and values, {@code kafka-configs --alter --add-config producer_byte_rate=... --entity-type users} and
 * {@code --describe} printing what Kafka's prints, and a producer whose client id has {@code producer_byte_rate}
 * held near its quota with a positive throttle time in its own metrics, a consumer likewise with
 * {@code consumer_byte_rate}, a producer over its {@code request_percentage} told to hold back, an admin client over
 * its {@code controller_mutation_rate} refused with THROTTLING_QUOTA_EXCEEDED (KIP-599), topics auto-created by a
 * client's Metadata counted against that client's {@code controller_mutation_rate}, and raw connections over
 * their address's {@code connection_creation_rate} closed unanswered (KIP-612).
 */
@Timeout(300)
@ExtendWith(BrokerLogsExtension.class)
class ClientQuotasIT {

    private static final String CONFIG_TOOL = "kafka.admin.ConfigCommand";
    /** The client address of the raw connections the IP quota applies to. */
    private static final String RATED_ADDRESS = "127.0.0.2";
    private static final Map<BrokerKind, BrokerCluster> NODES = new EnumMap<>(BrokerKind.class);

    static Stream<BrokerKind> kinds() {
        return GroupClients.kinds();
    }

    @AfterAll
    static void stopNodes() {
        NODES.values().forEach(BrokerCluster::close);
        NODES.clear();
    }

    private static synchronized BrokerCluster node(BrokerKind kind) throws Exception {
        BrokerCluster started = NODES.get(kind);
        if (started != null) {
            return started;
        }
        BrokerCluster cluster = BrokerCluster.create(kind, 1, Map.of("quota.window.num", "2",
                "offsets.topic.replication.factor", "1"));
        try {
            cluster.start();
            try (Admin admin = admin(cluster)) {
                admin.createTopics(List.of(new NewTopic("quotas", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            }
        } catch (Exception | AssertionError e) {
            cluster.close();
            throw e;
        }
        NODES.put(kind, cluster);
        return cluster;
    }

    private static Admin admin(BrokerCluster cluster) {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers()));
    }

    private static ClientQuotaEntity entity(String... typeAndName) {
        Map<String, String> entries = new HashMap<>();
        for (int i = 0; i < typeAndName.length; i += 2) {
            entries.put(typeAndName[i], typeAndName[i + 1]);
        }
        return new ClientQuotaEntity(entries);
    }

    private static ClientQuotaAlteration alteration(ClientQuotaEntity entity, String key, Double value) {
        return new ClientQuotaAlteration(entity, List.of(new ClientQuotaAlteration.Op(key, value)));
    }

    private static JavaTool.Result kafkaConfigs(BrokerCluster cluster, String... args) {
        List<String> all = new ArrayList<>(List.of("--bootstrap-server", cluster.bootstrapServers()));
        all.addAll(List.of(args));
        return KafkaDistribution.tool(CONFIG_TOOL).args(all).timeout(Duration.ofSeconds(90)).build().run();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kinds")
    void quotasAlteredWithTheAdminClientAreDescribedByEntityAndFilter(BrokerKind kind) throws Exception {
        // Given
        BrokerCluster cluster = node(kind);
        try (Admin admin = admin(cluster)) {
            ClientQuotaEntity alice = entity("user", "alice");
            ClientQuotaEntity aliceApp = entity("user", "alice", "client-id", "app");

            // When
            admin.alterClientQuotas(List.of(
                    new ClientQuotaAlteration(alice, List.of(new ClientQuotaAlteration.Op("producer_byte_rate", 1024.0),
                            new ClientQuotaAlteration.Op("consumer_byte_rate", 2048.0))),
                    alteration(aliceApp, "request_percentage", 50.0),
                    alteration(entity("client-id", "app"), "controller_mutation_rate", 10.0),
                    alteration(entity("ip", "10.1.2.3"), "connection_creation_rate", 7.0))).all()
                    .get(30, TimeUnit.SECONDS);
            admin.alterClientQuotas(List.of(alteration(entity("user", null), "producer_byte_rate", 1.0)),
                    new AlterClientQuotasOptions().validateOnly(true)).all().get(30, TimeUnit.SECONDS);

            // Then
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(admin.describeClientQuotas(
                    ClientQuotaFilter.containsOnly(List.of(ClientQuotaFilterComponent.ofEntity("user", "alice"))))
                    .entities().get(10, TimeUnit.SECONDS)).isEqualTo(Map.of(alice,
                    Map.of("producer_byte_rate", 1024.0, "consumer_byte_rate", 2048.0))));
            assertThat(admin.describeClientQuotas(ClientQuotaFilter.contains(List.of(
                    ClientQuotaFilterComponent.ofEntity("user", "alice")))).entities().get(10, TimeUnit.SECONDS))
                    .containsOnlyKeys(alice, aliceApp);
            assertThat(admin.describeClientQuotas(ClientQuotaFilter.containsOnly(List.of(
                    ClientQuotaFilterComponent.ofEntity("client-id", "app")))).entities().get(10, TimeUnit.SECONDS))
                    .isEqualTo(Map.of(entity("client-id", "app"), Map.of("controller_mutation_rate", 10.0)));
            assertThat(admin.describeClientQuotas(ClientQuotaFilter.contains(List.of(
                    ClientQuotaFilterComponent.ofEntityType("client-id")))).entities().get(10, TimeUnit.SECONDS))
                    .containsKeys(entity("client-id", "app"), aliceApp).doesNotContainKey(alice);
            assertThat(admin.describeClientQuotas(ClientQuotaFilter.containsOnly(List.of(
                    ClientQuotaFilterComponent.ofEntity("ip", "10.1.2.3")))).entities().get(10, TimeUnit.SECONDS))
                    .isEqualTo(Map.of(entity("ip", "10.1.2.3"), Map.of("connection_creation_rate", 7.0)));
            assertThat(admin.describeClientQuotas(ClientQuotaFilter.containsOnly(List.of(
                    ClientQuotaFilterComponent.ofDefaultEntity("user")))).entities().get(10, TimeUnit.SECONDS))
                    .isEmpty();

            // When: one key removed
            admin.alterClientQuotas(List.of(alteration(alice, "producer_byte_rate", null))).all()
                    .get(30, TimeUnit.SECONDS);

            // Then
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(admin.describeClientQuotas(
                    ClientQuotaFilter.containsOnly(List.of(ClientQuotaFilterComponent.ofEntity("user", "alice"))))
                    .entities().get(10, TimeUnit.SECONDS)).isEqualTo(Map.of(alice,
                    Map.of("consumer_byte_rate", 2048.0))));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kinds")
    void badEntitiesKeysValuesAndFiltersGetKafkasErrors(BrokerKind kind) throws Exception {
        // Given
        BrokerCluster cluster = node(kind);
        try (Admin admin = admin(cluster)) {
            Map<ClientQuotaAlteration, String> refused = Map.of(
                    alteration(entity("user", "bob"), "foo", 1.0), "Invalid configuration key foo",
                    alteration(entity("user", "bob2"), "connection_creation_rate", 1.0),
                    "Invalid configuration key connection_creation_rate",
                    alteration(entity("user", "bob3"), "producer_byte_rate", 1.5),
                    "producer_byte_rate cannot be a fractional value.",
                    alteration(entity("user", "bob4"), "producer_byte_rate", 0.0),
                    "Quota producer_byte_rate must be greater than 0",
                    alteration(entity("user", ""), "producer_byte_rate", 1.0), "Empty user not supported",
                    alteration(entity("ip", "10.0.0.1", "user", "bob5"), "connection_creation_rate", 1.0),
                    "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId");

            for (Map.Entry<ClientQuotaAlteration, String> bad : refused.entrySet()) {
                // When
                var result = admin.alterClientQuotas(List.of(bad.getKey())).all();

                // Then
                assertThatThrownBy(() -> result.get(30, TimeUnit.SECONDS)).as("%s", bad.getKey()).cause()
                        .isInstanceOf(InvalidRequestException.class).hasMessage(bad.getValue());
            }
            var unknownType = admin.describeClientQuotas(ClientQuotaFilter.contains(List.of(
                    ClientQuotaFilterComponent.ofEntityType("group")))).entities();
            assertThatThrownBy(() -> unknownType.get(30, TimeUnit.SECONDS)).cause()
                    .isInstanceOf(UnsupportedVersionException.class).hasMessage("Unsupported entity type group");
            var ipAndUser = admin.describeClientQuotas(ClientQuotaFilter.contains(List.of(
                    ClientQuotaFilterComponent.ofEntityType("ip"), ClientQuotaFilterComponent.ofEntityType("user"))))
                    .entities();
            assertThatThrownBy(() -> ipAndUser.get(30, TimeUnit.SECONDS)).cause()
                    .isInstanceOf(InvalidRequestException.class).hasMessage("Invalid entity filter component "
                            + "combination. IP filter component should not be used with user or clientId filter "
                            + "component.");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kinds")
    void kafkaConfigsAddsAndDescribesAUsersQuotaAsOnKafka(BrokerKind kind) throws Exception {
        // Given
        BrokerCluster cluster = node(kind);

        // When
        JavaTool.Result added = kafkaConfigs(cluster, "--alter", "--add-config",
                "producer_byte_rate=1048576,consumer_byte_rate=2097152", "--entity-type", "users", "--entity-name",
                "carol");
        JavaTool.Result clientAdded = kafkaConfigs(cluster, "--alter", "--add-config", "request_percentage=25",
                "--entity-type", "users", "--entity-name", "carol", "--entity-type", "clients", "--entity-name",
                "carol-app");
        JavaTool.Result described = kafkaConfigs(cluster, "--describe", "--entity-type", "users", "--entity-name",
                "carol");
        JavaTool.Result describedClient = kafkaConfigs(cluster, "--describe", "--entity-type", "users",
                "--entity-name", "carol", "--entity-type", "clients", "--entity-name", "carol-app");
        JavaTool.Result describedAll = kafkaConfigs(cluster, "--describe", "--entity-type", "users");
        JavaTool.Result badKey = kafkaConfigs(cluster, "--alter", "--add-config", "producer_byte_rate=1.5",
                "--entity-type", "users", "--entity-name", "carol");

        // Then
        assertThat(added.exitCode()).as("%s", added).isZero();
        assertThat(added.stdout()).as("%s", added).isEqualTo("Completed updating config for user carol.\n");
        assertThat(clientAdded.stdout()).as("%s", clientAdded).isEqualTo("Completed updating config for user carol.\n");
        assertThat(described.exitCode()).as("%s", described).isZero();
        assertThat(described.stdout()).as("%s", described).isEqualTo("Quota configs for user-principal 'carol' are "
                + "consumer_byte_rate=2097152.0, producer_byte_rate=1048576.0\n");
        assertThat(describedClient.stdout()).as("%s", describedClient).isEqualTo("Quota configs for user-principal "
                + "'carol', client-id 'carol-app' are request_percentage=25.0\n");
        assertThat(describedAll.exitCode()).as("%s", describedAll).isZero();
        assertThat(describedAll.stdout().lines()).as("%s", describedAll).contains("Quota configs for user-principal "
                + "'carol' are consumer_byte_rate=2097152.0, producer_byte_rate=1048576.0");
        assertThat(badKey.exitCode()).as("%s", badKey).isNotZero();
        assertThat(badKey.stdout() + badKey.stderr()).as("%s", badKey)
                .contains("producer_byte_rate cannot be a fractional value.");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kinds")
    void kafkaConfigsSetsAndDescribesTheDefaultClientIdsQuota(BrokerKind kind) throws Exception {
        // Given: a default so high that it holds back no client of the other cases
        BrokerCluster cluster = node(kind);

        // When
        JavaTool.Result added = kafkaConfigs(cluster, "--alter", "--add-config", "consumer_byte_rate=1073741824",
                "--entity-type", "clients", "--entity-default");
        JavaTool.Result described = kafkaConfigs(cluster, "--describe", "--entity-type", "clients",
                "--entity-default");

        // Then
        assertThat(added.exitCode()).as("%s", added).isZero();
        assertThat(added.stdout()).as("%s", added).isEqualTo("Completed updating default config for clients in "
                + "the cluster.\n");
        assertThat(described.stdout()).as("%s", described)
                .isEqualTo("Quota configs for the default client-id are consumer_byte_rate=1.073741824E9\n");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kinds")
    void aProducerWhoseClientIdHasAByteRateQuotaIsHeldNearItAndSeesThrottleTime(BrokerKind kind) throws Exception {
        // Given: 100,000 bytes/s for the client id, and a producer sending 1 KiB records as fast as it may
        BrokerCluster cluster = node(kind);
        int quota = 100_000;
        try (Admin admin = admin(cluster)) {
            admin.alterClientQuotas(List.of(alteration(entity("client-id", "throttled"), "producer_byte_rate",
                    (double) quota))).all().get(30, TimeUnit.SECONDS);
        }
        Map<String, Object> config = producerConfig(cluster, "throttled");
        config.put(ProducerConfig.BUFFER_MEMORY_CONFIG, 256 * 1024);
        config.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        AtomicLong acked = new AtomicLong();
        byte[] value = new byte[1024];
        double rate;
        double throttleMax;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config)) {
            producer.send(new ProducerRecord<>("quotas", value)).get(30, TimeUnit.SECONDS);
            long start = System.nanoTime();
            long end = start + TimeUnit.SECONDS.toNanos(5);

            // When
            while (System.nanoTime() < end) {
                producer.send(new ProducerRecord<>("quotas", value), (metadata, error) -> {
                    if (error == null && System.nanoTime() < end) {
                        acked.addAndGet(value.length);
                    }
                });
            }
            rate = acked.get() / ((System.nanoTime() - start) / 1e9);
            throttleMax = metric(producer.metrics(), "produce-throttle-time-max");
            producer.close(Duration.ZERO);
        }

        // Then
        System.out.printf("ClientQuotasIT %s: %.0f bytes/s under a quota of %d, produce-throttle-time-max %.0f ms%n",
                kind, rate, quota, throttleMax);
        assertThat(rate).isLessThan(2.0 * quota).isGreaterThan(0.0);
        assertThat(throttleMax).isGreaterThan(0.0);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kinds")
    void aConsumerWhoseClientIdHasAByteRateQuotaIsHeldNearItAndSeesThrottleTime(BrokerKind kind) throws Exception {
        // Given: 2 MB in a topic of its own, and 100,000 bytes/s for the reading client id
        BrokerCluster cluster = node(kind);
        int quota = 100_000;
        String topic = "quotas-read";
        try (Admin admin = admin(cluster)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            admin.alterClientQuotas(List.of(alteration(entity("client-id", "slow-reader"), "consumer_byte_rate",
                    (double) quota))).all().get(30, TimeUnit.SECONDS);
        }
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerConfig(cluster, "writer"))) {
            for (int i = 0; i < 2048; i++) {
                producer.send(new ProducerRecord<>(topic, new byte[1024]));
            }
            producer.flush();
        }
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        config.put(ConsumerConfig.CLIENT_ID_CONFIG, "slow-reader");
        config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        long bytes = 0;
        double rate;
        double throttleMax;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config)) {
            consumer.assign(List.of(new TopicPartition(topic, 0)));
            consumer.seekToBeginning(List.of(new TopicPartition(topic, 0)));
            long start = System.nanoTime();
            long end = start + TimeUnit.SECONDS.toNanos(5);

            // When
            while (System.nanoTime() < end) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    bytes += record.serializedValueSize();
                }
            }
            rate = bytes / ((System.nanoTime() - start) / 1e9);
            throttleMax = consumer.metrics().entrySet().stream()
                    .filter(e -> e.getKey().name().equals("fetch-throttle-time-max"))
                    .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue()).max().orElse(0.0);
        }

        // Then
        System.out.printf("ClientQuotasIT %s: read %.0f bytes/s under a quota of %d, fetch-throttle-time-max %.0f ms%n",
                kind, rate, quota, throttleMax);
        assertThat(rate).isLessThan(2.0 * quota).isGreaterThan(0.0);
        assertThat(throttleMax).isGreaterThan(0.0);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kinds")
    void aProducerOverItsRequestPercentageSeesThrottleTime(BrokerKind kind) throws Exception {
        // Given: 0.01 % of a request-handler thread for the client id, far less than a few produce requests take
        BrokerCluster cluster = node(kind);
        try (Admin admin = admin(cluster)) {
            admin.alterClientQuotas(List.of(alteration(entity("client-id", "busy"), "request_percentage", 0.01)))
                    .all().get(30, TimeUnit.SECONDS);
        }
        Map<String, Object> config = producerConfig(cluster, "busy");
        double throttleMax = 0;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config)) {
            // When: one record at a time until the client reports a throttle (or 500 records)
            for (int i = 0; i < 500 && throttleMax == 0; i++) {
                producer.send(new ProducerRecord<>("quotas", new byte[10])).get(30, TimeUnit.SECONDS);
                throttleMax = metric(producer.metrics(), "produce-throttle-time-max");
            }
        }

        // Then
        assertThat(throttleMax).isGreaterThan(0.0);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kinds")
    void aClientOverItsControllerMutationRateIsRefusedWithThrottlingQuotaExceeded(BrokerKind kind)
            throws Exception {
        // Given: 1 partition per second for the client id, a burst of 11 (controller.quota.window.num 11 × 1 s)
        BrokerCluster cluster = node(kind);
        try (Admin admin = admin(cluster)) {
            admin.alterClientQuotas(List.of(alteration(entity("client-id", "mutator"), "controller_mutation_rate",
                    1.0))).all().get(30, TimeUnit.SECONDS);
        }
        AtomicLong names = new AtomicLong();
        List<String> created = new ArrayList<>();

        // When: a topic of 20 partitions takes the bucket below zero, then one more partition is asked for (retried
        // until the controller has the quota: before that both are created)
        ThrottlingQuotaExceededException refused = await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(200)).until(() -> {
                    String big = "mutations-" + names.incrementAndGet();
                    if (createTopic(cluster, big, 20) == null) {
                        created.add(big);
                    }
                    return createTopic(cluster, "mutations-" + names.incrementAndGet(), 1);
                }, e -> e != null);
        ThrottlingQuotaExceededException deleteRefused = deleteTopic(cluster, created.get(created.size() - 1));

        // Then: Kafka's error with the time until the bucket is back at zero (9 s for -9 credits, less the time
        // taken since); DeleteTopics v6 is strict as well
        assertThat(refused).hasMessage("The throttling quota has been exceeded.");
        assertThat(refused.throttleTimeMs()).isBetween(1, 20_000);
        assertThat(deleteRefused).isNotNull();
        assertThat(deleteRefused.throttleTimeMs()).isBetween(1, 20_000);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kinds")
    void topicsAutoCreatedByMetadataCountAgainstTheClientsControllerMutationRate(BrokerKind kind) throws Exception {
        // Given: 0.1 partition per second for client id "auto-creator", a burst of 1.1 (11 samples of 1 s)
        BrokerCluster cluster = node(kind);
        try (Admin admin = admin(cluster)) {
            admin.alterClientQuotas(List.of(alteration(entity("client-id", "auto-creator"),
                    "controller_mutation_rate", 0.1))).all().get(30, TimeUnit.SECONDS);
        }
        AtomicLong rounds = new AtomicLong();

        // When: that client's Metadata asks for 3 unknown topics of 1 partition (num.partitions), again with new names
        // until the controller has the quota (before that all 3 are created)
        Set<String> existing = await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                .until(() -> autoCreateAsAutoCreator(cluster, "auto-created-" + rounds.incrementAndGet() + "-"),
                        names -> names.size() < 3);

        // Then: as Kafka 4.1's AutoTopicCreationManager forwards the CreateTopics (v7, strict) in an envelope with
        // the client's principal and client id, one topic takes the burst to 0.1, another to -0.9 and the third is
        // refused: it is not created (Kafka sends the three in no particular order)
        assertThat(existing).hasSize(2);
    }

    /**
     * Sends a Metadata request (v12, auto-creation allowed) as client id "auto-creator" for {@code prefix}0, 1 and 2,
     * waits until one exists (the controller decided on all three in one command) and returns those that exist.
     */
    private static Set<String> autoCreateAsAutoCreator(BrokerCluster cluster, String prefix) throws Exception {
        MetadataRequestData request = new MetadataRequestData().setAllowAutoTopicCreation(true);
        for (int i = 0; i < 3; i++) {
            request.topics().add(new MetadataRequestData.MetadataRequestTopic().setName(prefix + i));
        }
        try (RawKafkaClient client = RawKafkaClient.connect(cluster.nodes().get(0))) {
            client.send(new RequestHeaderData().setRequestApiKey(request.apiKey()).setRequestApiVersion((short) 12)
                    .setCorrelationId(1).setClientId("auto-creator"), request);
            client.receive(Duration.ofSeconds(10));
        }
        try (Admin admin = admin(cluster)) {
            return await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
                    .until(() -> admin.listTopics().names().get(10, TimeUnit.SECONDS).stream()
                            .filter(name -> name.startsWith(prefix)).collect(Collectors.toSet()),
                            names -> !names.isEmpty());
        }
    }

    /** Creates the topic as client "mutator" without retrying on a quota violation: the violation, or null. */
    private static ThrottlingQuotaExceededException createTopic(BrokerCluster cluster, String name, int partitions)
            throws Exception {
        try (Admin admin = mutator(cluster)) {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1)),
                    new CreateTopicsOptions().retryOnQuotaViolation(false)).all().get(30, TimeUnit.SECONDS);
            return null;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof ThrottlingQuotaExceededException throttled) {
                return throttled;
            }
            throw e;
        }
    }

    private static ThrottlingQuotaExceededException deleteTopic(BrokerCluster cluster, String name)
            throws Exception {
        try (Admin admin = mutator(cluster)) {
            admin.deleteTopics(List.of(name), new DeleteTopicsOptions().retryOnQuotaViolation(false)).all()
                    .get(30, TimeUnit.SECONDS);
            return null;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof ThrottlingQuotaExceededException throttled) {
                return throttled;
            }
            throw e;
        }
    }

    /** A new admin client (a new connection: an earlier one may be throttled) with client id "mutator". */
    private static Admin mutator(BrokerCluster cluster) {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers(),
                AdminClientConfig.CLIENT_ID_CONFIG, "mutator"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kinds")
    void connectionsOverTheirAddresssConnectionCreationRateAreClosedUnanswered(BrokerKind kind) throws Exception {
        // Given: 127.0.0.2 (still loopback, unlike the admin client's 127.0.0.1) may open 1 connection per second;
        // with quota.window.num=2 a second one at once is over it
        BrokerCluster cluster = node(kind);
        try (Admin admin = admin(cluster)) {
            admin.alterClientQuotas(List.of(alteration(entity("ip", RATED_ADDRESS), "connection_creation_rate",
                    1.0))).all().get(30, TimeUnit.SECONDS);
        }
        String[] hostPort = cluster.bootstrapServers().split(",")[0].split(":");
        InetSocketAddress broker = new InetSocketAddress(hostPort[0], Integer.parseInt(hostPort[1]));
        try {
            // When: three connections at once (retried until the broker has the quota)
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofSeconds(2)).untilAsserted(() -> {
                List<Boolean> answered = new ArrayList<>();
                List<Socket> sockets = new ArrayList<>();
                try {
                    for (int i = 0; i < 3; i++) {
                        sockets.add(rawConnection(broker));
                    }
                    for (Socket socket : sockets) {
                        answered.add(answersApiVersions(socket));
                    }
                } finally {
                    for (Socket socket : sockets) {
                        socket.close();
                    }
                }

                // Then: the first is served, a later one is closed without an answer
                assertThat(answered.get(0)).isTrue();
                assertThat(answered.subList(1, 3)).contains(false);
            });
        } finally {
            try (Admin admin = admin(cluster)) {
                admin.alterClientQuotas(List.of(alteration(entity("ip", RATED_ADDRESS), "connection_creation_rate",
                        null))).all().get(30, TimeUnit.SECONDS);
            }
        }
    }

    private static Socket rawConnection(InetSocketAddress broker) throws Exception {
        Socket socket = new Socket();
        socket.bind(new InetSocketAddress(InetAddress.getByName(RATED_ADDRESS), 0));
        socket.connect(broker, 10_000);
        return socket;
    }

    /**
     * Sends ApiVersions v0 (size, api key 18, version 0, correlation id 1, null client id) and reads the answer:
     * false when the broker closes the connection first (an end of stream, a reset, or a broken pipe when it was
     * closed before the request was written).
     */
    private static boolean answersApiVersions(Socket socket) throws Exception {
        socket.setSoTimeout(10_000);
        try {
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            out.writeInt(10);
            out.writeShort(18);
            out.writeShort(0);
            out.writeInt(1);
            out.writeShort(-1);
            out.flush();
            DataInputStream in = new DataInputStream(socket.getInputStream());
            int size = in.readInt();
            in.readFully(new byte[size]);
            return true;
        } catch (EOFException | SocketException e) {
            return false;
        }
    }

    private static Map<String, Object> producerConfig(BrokerCluster cluster, String clientId) {
        Map<String, Object> config = new HashMap<>();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        config.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        return config;
    }

    private static double metric(Map<MetricName, ? extends Metric> metrics, String name) {
        return metrics.entrySet().stream().filter(e -> e.getKey().name().equals(name)
                        && e.getKey().group().equals("producer-metrics"))
                .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue()).findFirst().orElse(0.0);
    }
}
