package io.cairn.compat.replication;

import static io.cairn.compat.replication.ReplicationClients.STATE_TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerSessions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The group coordinator fails over with its {@code __consumer_offsets} partition (replication factor 3, Kafka's
 * default): a group consumes a replicated topic committing after each poll; its coordinator's node is killed
 * (SIGKILL); the group finds the new coordinator, the new leader of its {@code __consumer_offsets} partition, and goes
 * on consuming and committing. A new member of the group afterwards starts from the committed offsets. No record is
 * lost, and a record is read twice only if it came after the last commit the old coordinator acknowledged. With the
 * classic group protocol and with KIP-848's consumer protocol, whose group state (members, epochs, assignments) the
 * new coordinator loads from the partition.
 */
@Timeout(600)
@ExtendWith(BrokerLogsExtension.class)
@Tag("faults")
class GroupFailoverIT {

    private static final int PARTITIONS = 3;
    private static final int BATCH = 1000;
    private static final String OFFSETS_TOPIC = "__consumer_offsets";

    /** Each kind with each group protocol: the classic one and KIP-848's consumer protocol. */
    static Stream<Arguments> kindsAndProtocols() {
        return ReplicationClients.kinds().flatMap(kind -> Stream.of(Arguments.of(kind, "classic"),
                Arguments.of(kind, "consumer")));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("kindsAndProtocols")
    void theGroupMovesToTheNewCoordinatorAndGoesOnFromItsCommittedOffsets(BrokerKind kind, String protocol)
            throws Exception {
        // Given: a group that has consumed and committed the first batch
        try (BrokerCluster cluster = BrokerCluster.create(kind, ReplicationClients.NODES,
                BrokerSessions.quick(ReplicationClients.clusterConfig()));
             Admin admin = ReplicationClients.startAndConnect(cluster);
             KafkaProducer<String, String> producer = producer(cluster)) {
            String topic = ReplicationClients.uniqueName("failover");
            String group = ReplicationClients.uniqueName("failover-group");
            ReplicationClients.createTopic(admin, topic, PARTITIONS, 2);
            produce(producer, topic, 0, BATCH);
            Reads read = new Reads();
            int coordinator;
            int newCoordinator;
            Map<TopicPartition, OffsetAndMetadata> committedBeforeKill;
            try (KafkaConsumer<String, String> consumer = consumer(cluster, group, protocol)) {
                consumer.subscribe(List.of(topic));
                consumeUntil(consumer, read, BATCH);
                ReplicationClients.awaitFullIsr(admin, List.of(topic, OFFSETS_TOPIC));
                coordinator = coordinator(admin, group);
                committedBeforeKill = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                        .get(30, TimeUnit.SECONDS);

                // When: the coordinator's node crashes while the group goes on
                cluster.node(coordinator).kill();
                produce(producer, topic, BATCH, BATCH);
                consumeUntil(consumer, read, 2 * BATCH);

                // Then: the coordinator is the new leader of the group's __consumer_offsets partition
                newCoordinator = coordinator(admin, group);
                int offsetsLeader = ReplicationClients.leader(admin, OFFSETS_TOPIC, 0);
                assertThat(newCoordinator).as("the new coordinator").isNotEqualTo(coordinator)
                        .isEqualTo(offsetsLeader);
            }
            produce(producer, topic, 2 * BATCH, BATCH);
            int readByFirstMember = read.values().size();
            try (KafkaConsumer<String, String> second = consumer(cluster, group, protocol)) {
                second.subscribe(List.of(topic));
                consumeUntil(second, read, 3 * BATCH);
            }

            // Then
            long committedAtKill = committedBeforeKill.values().stream().mapToLong(OffsetAndMetadata::offset).sum();
            List<String> distinct = read.values().stream().distinct().toList();
            System.out.printf("%s %s: coordinator %d killed after %d committed offsets, new coordinator %d; %d "
                            + "records read by the first member, %d by the second, %d distinct of %d produced%n", kind,
                    protocol,
                    coordinator, committedAtKill, newCoordinator, readByFirstMember,
                    read.values().size() - readByFirstMember, distinct.size(), 3 * BATCH);
            assertThat(committedAtKill).as("the first batch was committed before the kill").isEqualTo(BATCH);
            assertThat(distinct).as("every record read").hasSize(3 * BATCH);
            assertThat(read.violations()).as("records read again after a commit covered them").isEmpty();
            assertThat(read.values().subList(readByFirstMember, read.values().size()))
                    .as("the second member starts from the committed offsets: only the third batch")
                    .hasSize(BATCH).doesNotHaveDuplicates().allMatch(value -> Integer.parseInt(value.substring(
                            "record-".length())) >= 2 * BATCH);
        }
    }

    /** The node id of the group's coordinator as DescribeGroups (after FindCoordinator) reports it. */
    private static int coordinator(Admin admin, String group) {
        int[] id = {-1};
        await().atMost(STATE_TIMEOUT).pollInterval(Duration.ofMillis(250)).ignoreExceptions().untilAsserted(() -> {
            ConsumerGroupDescription description = admin.describeConsumerGroups(List.of(group)).all()
                    .get(10, TimeUnit.SECONDS).get(group);
            assertThat(description.coordinator()).as("the coordinator of %s", group).isNotNull();
            id[0] = description.coordinator().id();
        });
        return id[0];
    }

    /**
     * Polls and commits each poll synchronously until {@code read} has {@code count} records; a commit the
     * coordinator's failover interrupts counts as not made, and the next poll's commit covers it.
     */
    private static void consumeUntil(KafkaConsumer<String, String> consumer, Reads read, int count) {
        await().atMost(STATE_TIMEOUT).pollInSameThread().pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(1))
                .untilAsserted(() -> {
                    for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                        read.add(record.value());
                    }
                    try {
                        consumer.commitSync(Duration.ofSeconds(30));
                        read.committed();
                    } catch (KafkaException e) {
                        throw new AssertionError("commit not acknowledged yet: " + e, e);
                    }
                    assertThat(read.distinct()).as("distinct records read").isGreaterThanOrEqualTo(count);
                });
    }

    /**
     * The values read in order, and the reads that broke the rule: a record read again although a commit the
     * coordinator acknowledged already covered it. Used by the test thread only.
     */
    private static final class Reads {
        private final List<String> values = new ArrayList<>();
        private final Map<String, Integer> firstRead = new HashMap<>();
        private final List<String> violations = new ArrayList<>();
        private int committed;

        void add(String value) {
            Integer first = firstRead.putIfAbsent(value, values.size());
            if (first != null && first < committed) {
                violations.add(value + " (first read at " + first + ", commits covered " + committed + ")");
            }
            values.add(value);
        }

        void committed() {
            committed = values.size();
        }

        List<String> values() {
            return values;
        }

        int distinct() {
            return firstRead.size();
        }

        List<String> violations() {
            return violations;
        }
    }

    private static void produce(KafkaProducer<String, String> producer, String topic, int from, int count)
            throws Exception {
        List<Future<?>> sends = new ArrayList<>();
        for (int i = from; i < from + count; i++) {
            sends.add(producer.send(new ProducerRecord<>(topic, i % PARTITIONS, null, "record-" + i)));
        }
        producer.flush();
        for (Future<?> send : sends) {
            send.get(120, TimeUnit.SECONDS);
        }
    }

    private static KafkaProducer<String, String> producer(BrokerCluster cluster) {
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    private static KafkaConsumer<String, String> consumer(BrokerCluster cluster, String group, String protocol) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        if (protocol.equals("classic")) {
            // KIP-848's session timeout is the broker's group.consumer.session.timeout.ms, not the client's
            props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 10_000);
        }
        return new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer());
    }
}
