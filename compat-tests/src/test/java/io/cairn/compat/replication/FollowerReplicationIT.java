package io.cairn.compat.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.compat.group.GroupClients;
import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
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
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Followers replicate on a three-node cluster, with the stock Java clients: a topic of replication factor 3 takes
 * 5,000 records with acks=1 and 5,000 with acks=all (which completes only when the followers fetched them and the high
 * watermark moved) and a consumer reads them all; then the leader is killed (SIGKILL), the controller elects another
 * in-sync replica, which serves every acknowledged record in order and takes 1,000 more acks=all; the killed node
 * restarts and catches up with what it missed (its {@code replication-offset-checkpoint} reaches the leader's end),
 * and once the second leader is killed too the next one still serves everything. The same scenario runs against
 * Cairn and the reference Kafka.
 */
@Timeout(600)
@ExtendWith(BrokerLogsExtension.class)
class FollowerReplicationIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(90);
    private static final int FIRST_BATCH = 5_000;
    private static final int AFTER_FAILOVER = 1_000;

    static List<BrokerKind> kinds() {
        return GroupClients.kinds().toList();
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void followersReplicateAndEveryAcknowledgedRecordSurvivesTheLossOfTheLeader(BrokerKind kind) throws Exception {
        try (BrokerCluster cluster = BrokerCluster.create(kind, 3, Map.of())) {
            cluster.start();
            String topic = GroupClients.uniqueName("replicated");
            TopicPartition tp = new TopicPartition(topic, 0);
            try (Admin admin = admin(cluster.bootstrapServers())) {
                admin.createTopics(List.of(new NewTopic(topic, 1, (short) 3))).all().get(30, TimeUnit.SECONDS);
                int firstLeader = awaitLeader(admin, topic, -1);

                // When: acks=1, then acks=all
                List<String> expected = new ArrayList<>();
                produce(cluster.bootstrapServers(), tp, "1", 0, FIRST_BATCH, expected);
                produce(cluster.bootstrapServers(), tp, "all", FIRST_BATCH, FIRST_BATCH, expected);

                // Then
                assertThat(consumeAll(cluster.bootstrapServers(), tp, expected.size())).isEqualTo(expected);
                assertThat(isr(admin, topic)).containsExactlyInAnyOrder(1, 2, 3);

                // When: the leader dies
                BrokerProcess killed = cluster.node(firstLeader);
                killed.kill();
                int secondLeader = awaitLeader(admin, topic, firstLeader);

                // Then: the new leader has every acknowledged record, and takes more
                String survivors = survivors(cluster, firstLeader);
                assertThat(consumeAll(survivors, tp, expected.size())).isEqualTo(expected);
                produce(survivors, tp, "all", expected.size(), AFTER_FAILOVER, expected);
                assertThat(consumeAll(survivors, tp, expected.size())).isEqualTo(expected);

                // When: the killed node comes back
                cluster.startNode(killed);

                // Then: it catches up with what it missed
                awaitCheckpointedHighWatermark(killed, topic, expected.size());

                // When: the second leader dies too
                cluster.node(secondLeader).kill();
                int thirdLeader = awaitLeader(admin, topic, secondLeader);

                // Then
                assertThat(thirdLeader).isNotEqualTo(secondLeader);
                assertThat(consumeAll(survivors(cluster, secondLeader), tp, expected.size())).isEqualTo(expected);
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

    /** Sends {@code count} records with {@code acks} and waits for every acknowledgement. */
    private static void produce(String bootstrap, TopicPartition tp, String acks, int first, int count,
                                List<String> expected) throws Exception {
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
                sends.add(producer.send(new ProducerRecord<>(tp.topic(), tp.partition(), "k" + i, "v" + i)));
            }
            producer.flush();
            for (Future<RecordMetadata> send : sends) {
                send.get(60, TimeUnit.SECONDS);
            }
        }
        for (int i = first; i < first + count; i++) {
            expected.add("v" + i);
        }
    }

    /** Reads the partition from the beginning until {@code count} records arrived; returns their values. */
    private static List<String> consumeAll(String bootstrap, TopicPartition tp, int count) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new StringDeserializer())) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (values.size() < count && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                    values.add(record.value());
                }
            }
        }
        return values;
    }

    /**
     * Waits until {@code node}'s {@code replication-offset-checkpoint} (Kafka's format, written every
     * {@code replica.high.watermark.checkpoint.interval.ms} by Kafka and Cairn alike) records {@code offset} as the
     * partition's high watermark: a follower's high watermark never passes its log end, so its log holds every record.
     */
    private static void awaitCheckpointedHighWatermark(BrokerProcess node, String topic, long offset) {
        Path checkpoint = node.dataDir().resolve("replication-offset-checkpoint");
        String line = topic + " 0 " + offset;
        await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(500)).ignoreExceptions()
                .until(() -> Files.readAllLines(checkpoint).contains(line));
    }
}
