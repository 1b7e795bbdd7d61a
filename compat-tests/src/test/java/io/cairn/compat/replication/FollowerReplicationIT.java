package io.cairn.compat.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.compat.group.GroupClients;
import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.BrokerSessions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
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
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Followers replicate on a three-node cluster, with the stock Java clients and two fetcher threads per leader
 * ({@code num.replica.fetchers=2}): each of three partitions of replication factor 3 takes 5,000 records with acks=1
 * and 5,000 with acks=all (which completes only when the followers fetched them and the high watermark moved) and a
 * consumer reads them all; then the leader of partition 0 is killed (SIGKILL), the controller elects other in-sync
 * replicas, which serve every acknowledged record in order and take 1,000 more acks=all; the killed node restarts and
 * catches up with what it missed (its {@code replication-offset-checkpoint} reaches the leaders' ends), and once the
 * second leader of partition 0 is killed too the next ones still serve everything. The same scenario runs against
 * Cairn and the reference Kafka.
 */
@Timeout(600)
@ExtendWith(BrokerLogsExtension.class)
@Tag("faults")
class FollowerReplicationIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(90);
    private static final int FIRST_BATCH = 5_000;
    private static final int AFTER_FAILOVER = 1_000;
    private static final int PARTITIONS = 3;

    static List<BrokerKind> kinds() {
        return GroupClients.kinds().toList();
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void followersReplicateAndEveryAcknowledgedRecordSurvivesTheLossOfTheLeader(BrokerKind kind) throws Exception {
        try (BrokerCluster cluster = BrokerCluster.create(kind, 3,
                BrokerSessions.quick(Map.of("num.replica.fetchers", "2")))) {
            cluster.start();
            String topic = GroupClients.uniqueName("replicated");
            try (Admin admin = admin(cluster.bootstrapServers())) {
                admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 3))).all()
                        .get(30, TimeUnit.SECONDS);
                int firstLeader = awaitLeader(admin, topic, -1);

                // When: acks=1, then acks=all
                Map<Integer, List<String>> expected = new TreeMap<>();
                produce(cluster.bootstrapServers(), topic, "1", 0, FIRST_BATCH, expected);
                produce(cluster.bootstrapServers(), topic, "all", FIRST_BATCH, FIRST_BATCH, expected);

                // Then
                assertThat(consumeAll(cluster.bootstrapServers(), topic, expected)).isEqualTo(expected);
                assertThat(isr(admin, topic)).containsExactlyInAnyOrder(1, 2, 3);

                // When: the leader of partition 0 dies
                BrokerProcess killed = cluster.node(firstLeader);
                killed.kill();
                int secondLeader = awaitLeader(admin, topic, firstLeader);

                // Then: the new leaders have every acknowledged record, and take more
                String survivors = survivors(cluster, firstLeader);
                assertThat(consumeAll(survivors, topic, expected)).isEqualTo(expected);
                produce(survivors, topic, "all", 2 * FIRST_BATCH, AFTER_FAILOVER, expected);
                assertThat(consumeAll(survivors, topic, expected)).isEqualTo(expected);

                // When: the killed node comes back
                cluster.startNode(killed);

                // Then: it catches up with what it missed
                awaitCheckpointedHighWatermarks(killed, topic, expected);

                // When: the second leader of partition 0 dies too
                cluster.node(secondLeader).kill();
                int thirdLeader = awaitLeader(admin, topic, secondLeader);

                // Then
                assertThat(thirdLeader).isNotEqualTo(secondLeader);
                assertThat(consumeAll(survivors(cluster, secondLeader), topic, expected)).isEqualTo(expected);
            }
            for (BrokerProcess node : cluster.nodes()) {
                assertThat(node.logLinesContaining("LEAK:")).isEmpty();
            }
        }
    }

    private static Admin admin(String bootstrap) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        return Admin.create(props);
    }

    /** The bootstrap servers of every node except {@code deadId}. */
    private static String survivors(BrokerCluster cluster, int deadId) {
        return cluster.nodes().stream().filter(node -> node != cluster.node(deadId))
                .map(BrokerProcess::bootstrapServers).collect(Collectors.joining(","));
    }

    /** Waits until the partition has a leader other than {@code notThis}; returns it. */
    private static int awaitLeader(Admin admin, String topic, int notThis) {
        int[] leader = {-1};
        await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(250)).ignoreExceptions().until(() -> {
            TopicDescription description = admin.describeTopics(List.of(topic)).allTopicNames()
                    .get(10, TimeUnit.SECONDS).get(topic);
            Node node = description.partitions().get(0).leader();
            leader[0] = node == null ? -1 : node.id();
            return leader[0] >= 0 && leader[0] != notThis;
        });
        return leader[0];
    }

    private static List<Integer> isr(Admin admin, String topic) throws Exception {
        return admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic)
                .partitions().get(0).isr().stream().map(Node::id).toList();
    }

    /** Sends {@code count} records per partition with {@code acks} and waits for every acknowledgement. */
    private static void produce(String bootstrap, String topic, String acks, int first, int count,
                                Map<Integer, List<String>> expected) throws Exception {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, acks);
        props.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "30000");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props, new StringSerializer(),
                new StringSerializer())) {
            List<Future<RecordMetadata>> sends = new ArrayList<>();
            for (int i = first; i < first + count; i++) {
                for (int partition = 0; partition < PARTITIONS; partition++) {
                    sends.add(producer.send(new ProducerRecord<>(topic, partition, "k" + i, partition + "-" + i)));
                }
            }
            producer.flush();
            for (Future<RecordMetadata> send : sends) {
                send.get(60, TimeUnit.SECONDS);
            }
        }
        for (int partition = 0; partition < PARTITIONS; partition++) {
            List<String> values = expected.computeIfAbsent(partition, p -> new ArrayList<>());
            for (int i = first; i < first + count; i++) {
                values.add(partition + "-" + i);
            }
        }
    }

    /** Reads every partition from the beginning until the expected counts arrived; returns the values by partition. */
    private static Map<Integer, List<String>> consumeAll(String bootstrap, String topic,
                                                         Map<Integer, List<String>> expected) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        Map<Integer, List<String>> values = new TreeMap<>();
        int total = expected.values().stream().mapToInt(List::size).sum();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new StringDeserializer())) {
            List<TopicPartition> partitions = expected.keySet().stream()
                    .map(p -> new TopicPartition(topic, p)).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            int read = 0;
            while (read < total && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                    values.computeIfAbsent(record.partition(), p -> new ArrayList<>()).add(record.value());
                    read++;
                }
            }
        }
        return values;
    }

    /**
     * Waits until {@code node}'s {@code replication-offset-checkpoint} (Kafka's format, written every
     * {@code replica.high.watermark.checkpoint.interval.ms} by Kafka and Cairn alike) records each partition's
     * expected end as its high watermark: a follower's high watermark never passes its log end, so its log holds
     * every record.
     */
    private static void awaitCheckpointedHighWatermarks(BrokerProcess node, String topic,
                                                        Map<Integer, List<String>> expected) {
        Path checkpoint = node.dataDir().resolve("replication-offset-checkpoint");
        List<String> lines = expected.entrySet().stream()
                .map(e -> topic + " " + e.getKey() + " " + e.getValue().size()).toList();
        await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(500)).ignoreExceptions()
                .until(() -> Files.readAllLines(checkpoint).containsAll(lines));
    }
}
