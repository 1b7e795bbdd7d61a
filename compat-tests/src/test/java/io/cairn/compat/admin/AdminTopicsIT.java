package io.cairn.compat.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.CreatePartitionsOptions;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicCollection;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.InvalidReplicaAssignmentException;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicIdException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Kafka's Java AdminClient against Cairn and the reference Kafka, the same scenario on both: createTopics (defaults,
 * overrides, validateOnly, and every error a user can provoke), listTopics, describeTopics by name and by id,
 * describeConfigs, deleteTopics by name and by id, and a producer's metadata lookup that auto-creates a topic.
 */
@Timeout(300)
@ExtendWith(BrokerLogsExtension.class)
class AdminTopicsIT {

    private static final long TIMEOUT_S = 30;

    @ParameterizedTest
    @EnumSource(BrokerKind.class)
    void adminCreatesDescribesAndDeletesTopics(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String prefix = "admin-" + UUID.randomUUID().toString().substring(0, 8);
        String a = prefix + "-a";
        String b = prefix + "-b";
        try (Admin admin = admin(broker)) {
            // When
            CreateTopicsResult created = admin.createTopics(List.of(new NewTopic(a, 2, (short) 1),
                    new NewTopic(b, Optional.empty(), Optional.empty()).configs(Map.of("retention.ms", "1000"))));
            created.all().get(TIMEOUT_S, TimeUnit.SECONDS);

            // Then
            assertThat(created.numPartitions(a).get()).isEqualTo(2);
            assertThat(created.replicationFactor(a).get()).isEqualTo(1);
            assertThat(created.numPartitions(b).get()).isEqualTo(1);
            Uuid idA = created.topicId(a).get();
            Uuid idB = created.topicId(b).get();
            assertThat(idA).isNotEqualTo(Uuid.ZERO_UUID);
            ConfigEntry retention = created.config(b).get().get("retention.ms");
            assertThat(retention.value()).isEqualTo("1000");
            assertThat(retention.source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG);
            assertThat(created.config(a).get().get("cleanup.policy").value()).isEqualTo("delete");

            assertThat(admin.listTopics().names().get(TIMEOUT_S, TimeUnit.SECONDS)).contains(a, b);
            TopicDescription described = admin.describeTopics(List.of(a)).allTopicNames()
                    .get(TIMEOUT_S, TimeUnit.SECONDS).get(a);
            assertThat(described.topicId()).isEqualTo(idA);
            assertThat(described.isInternal()).isFalse();
            assertThat(described.partitions()).hasSize(2);
            for (TopicPartitionInfo partition : described.partitions()) {
                assertThat(partition.leader().id()).isEqualTo(1);
                assertThat(partition.replicas()).extracting(n -> n.id()).containsExactly(1);
                assertThat(partition.isr()).extracting(n -> n.id()).containsExactly(1);
            }
            TopicDescription byId = admin.describeTopics(TopicCollection.ofTopicIds(List.of(idB))).allTopicIds()
                    .get(TIMEOUT_S, TimeUnit.SECONDS).get(idB);
            assertThat(byId.name()).isEqualTo(b);
            Config configs = admin.describeConfigs(List.of(new ConfigResource(ConfigResource.Type.TOPIC, b))).all()
                    .get(TIMEOUT_S, TimeUnit.SECONDS).get(new ConfigResource(ConfigResource.Type.TOPIC, b));
            assertThat(configs.get("retention.ms").value()).isEqualTo("1000");
            assertThat(configs.get("segment.bytes").source()).isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);

            admin.deleteTopics(List.of(a)).all().get(TIMEOUT_S, TimeUnit.SECONDS);
            admin.deleteTopics(TopicCollection.ofTopicIds(List.of(idB))).all().get(TIMEOUT_S, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(admin.listTopics().names()
                    .get(TIMEOUT_S, TimeUnit.SECONDS)).doesNotContain(a, b));
        }
        assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
    }

    @ParameterizedTest
    @EnumSource(BrokerKind.class)
    void adminGetsKafkasErrorsForInvalidRequests(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String prefix = "admin-err-" + UUID.randomUUID().toString().substring(0, 8);
        try (Admin admin = admin(broker)) {
            admin.createTopics(List.of(new NewTopic(prefix, 1, (short) 1))).all().get(TIMEOUT_S, TimeUnit.SECONDS);

            // When / Then
            assertFails(admin.createTopics(List.of(new NewTopic(prefix, 1, (short) 1))).all(),
                    TopicExistsException.class);
            assertFails(admin.createTopics(List.of(new NewTopic(prefix + "-bad name", 1, (short) 1))).all(),
                    InvalidTopicException.class);
            assertFails(admin.createTopics(List.of(new NewTopic(prefix + "-p0", 0, (short) 1))).all(),
                    InvalidPartitionsException.class);
            assertFails(admin.createTopics(List.of(new NewTopic(prefix + "-rf5", 1, (short) 5))).all(),
                    InvalidReplicationFactorException.class);
            assertFails(admin.createTopics(List.of(new NewTopic(prefix + "-cfg", 1, (short) 1)
                    .configs(Map.of("retention.ms", "-5")))).all(), InvalidConfigurationException.class);
            assertFails(admin.createTopics(List.of(new NewTopic(prefix + "-asg", Map.of(0, List.of(1, 42))))).all(),
                    InvalidReplicaAssignmentException.class);
            assertFails(admin.describeTopics(List.of(prefix + "-none")).allTopicNames(),
                    UnknownTopicOrPartitionException.class);
            assertFails(admin.describeTopics(TopicCollection.ofTopicIds(List.of(Uuid.randomUuid()))).allTopicIds(),
                    UnknownTopicIdException.class);
            assertFails(admin.deleteTopics(List.of(prefix + "-none")).all(), UnknownTopicOrPartitionException.class);
            assertFails(admin.deleteTopics(TopicCollection.ofTopicIds(List.of(Uuid.randomUuid()))).all(),
                    UnknownTopicIdException.class);
            admin.createTopics(List.of(new NewTopic(prefix + "-v", 4, (short) 1)),
                    new CreateTopicsOptions().validateOnly(true)).all().get(TIMEOUT_S, TimeUnit.SECONDS);
            Set<String> names = admin.listTopics().names().get(TIMEOUT_S, TimeUnit.SECONDS);
            assertThat(names).contains(prefix).doesNotContain(prefix + "-v", prefix + "-p0", prefix + "-rf5",
                    prefix + "-cfg", prefix + "-asg");
        }
        assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
    }

    @ParameterizedTest
    @EnumSource(BrokerKind.class)
    void createPartitionsChecksManualAssignmentsAsKafkaDoes(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = "admin-asg-" + UUID.randomUUID().toString().substring(0, 8);
        try (Admin admin = admin(broker)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(TIMEOUT_S, TimeUnit.SECONDS);

            // When / Then
            assertFailsWith(admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(2, List.of(List.of(42)))))
                    .all(), InvalidReplicaAssignmentException.class,
                    "The manual partition assignment includes broker 42, but no such broker is registered.");
            assertFailsWith(admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(2,
                    List.of(List.of(1, 1))))).all(), InvalidReplicaAssignmentException.class,
                    "The manual partition assignment includes the broker 1 more than once.");
            assertFailsWith(admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(3,
                    List.of(List.of(1))))).all(), InvalidReplicaAssignmentException.class,
                    "Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified.");
            admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(2, List.of(List.of(1)))),
                    new CreatePartitionsOptions().validateOnly(true)).all().get(TIMEOUT_S, TimeUnit.SECONDS);
            assertThat(admin.describeTopics(List.of(topic)).allTopicNames().get(TIMEOUT_S, TimeUnit.SECONDS)
                    .get(topic).partitions()).as("nothing was added").hasSize(1);
            admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(2, List.of(List.of(1))))).all()
                    .get(TIMEOUT_S, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(TIMEOUT_S)).untilAsserted(() -> assertThat(admin.describeTopics(
                    List.of(topic)).allTopicNames().get(TIMEOUT_S, TimeUnit.SECONDS).get(topic).partitions())
                    .extracting(p -> p.leader().id()).containsExactly(1, 1));
        }
        assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
    }

    @ParameterizedTest
    @EnumSource(BrokerKind.class)
    void aProducersMetadataLookupAutoCreatesTheTopic(BrokerKind kind) {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = "auto-" + UUID.randomUUID().toString().substring(0, 8);
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "30000");
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props, new ByteArraySerializer(),
                new ByteArraySerializer())) {
            // When
            List<PartitionInfo> partitions = producer.partitionsFor(topic);

            // Then
            assertThat(partitions).hasSize(1);
            assertThat(partitions.get(0).leader().id()).isEqualTo(1);
        }
        assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
    }

    private static void assertFails(org.apache.kafka.common.KafkaFuture<?> future, Class<?> cause) {
        assertThatThrownBy(() -> future.get(TIMEOUT_S, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(cause);
    }

    private static void assertFailsWith(org.apache.kafka.common.KafkaFuture<?> future, Class<?> cause,
                                        String message) {
        assertThatThrownBy(() -> future.get(TIMEOUT_S, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(cause).hasMessage(message);
    }

    static Admin admin(BrokerProcess broker) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "20000");
        return Admin.create(props);
    }
}
