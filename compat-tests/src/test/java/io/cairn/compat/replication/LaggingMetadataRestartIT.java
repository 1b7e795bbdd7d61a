package io.cairn.compat.replication;

import static io.cairn.compat.replication.ReplicationClients.STATE_TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 20 item 2: no log is deleted from a stale metadata image. A node of a 3-node Cairn cluster (combined nodes)
 * is killed; while it is down a topic is deleted, another deleted and created again under the same name (a new
 * topic id) and a new one created. The node restarts with its metadata replay slowed down (the test-only
 * {@code -Dcairn.test.metadataApplyDelayMs}, through testkit's {@code BrokerProcess.extraJvmArgs}), so for seconds
 * after it starts its image is far behind the quorum's: an image in which the topics created before it went down do
 * not exist yet. The broker must open its logs and sweep the stray ones only from an image that has caught up with
 * its registration (the controller's {@code isCaughtUp}, Kafka's initial catch-up): every log of a live topic is
 * kept (the records of a topic whose only replica is this node are all still there), the deleted topic's log and the
 * re-created topic's old log are removed, and the node joins every ISR. Cairn only: the slowed replay is Cairn's.
 */
@Timeout(600)
@ExtendWith(BrokerLogsExtension.class)
@Tag("faults")
class LaggingMetadataRestartIT {

    /** Topics created before the node goes down, so that the replay of its own metadata log is long. */
    private static final int KEPT_TOPICS = 12;
    private static final int SOLO_RECORDS = 300;
    /**
     * Per metadata log entry: the few dozen entries of this scenario take over ten seconds to replay, longer than the
     * broker takes to start (at 100 ms the replay had reached the topics' creation before the broker's logs opened),
     * and well within its registration timeout.
     */
    private static final int APPLY_DELAY_MS = 500;
    private static final String STRAY_LINE = "Deleting stray log ";
    private static final String OLDER_TOPIC_ID_LINE = "of an older topic id";

    @Test
    void aNodeRestartedWithALaggingMetadataReplayKeepsEveryLiveLogAndRemovesTheDeletedOnes() throws Exception {
        Map<String, String> config = new HashMap<>(ReplicationClients.clusterConfig());
        config.put("min.insync.replicas", "1");
        try (BrokerCluster cluster = BrokerCluster.create(BrokerKind.CAIRN, ReplicationClients.NODES, config);
             Admin admin = ReplicationClients.startAndConnect(cluster)) {
            // Given: topics on every node, one whose only replica is the node that will lag, and topics that will be
            // deleted (one of them to be created again) while that node is down
            int lagging = laggingNodeId(cluster);
            BrokerProcess node = cluster.node(lagging);
            String prefix = ReplicationClients.uniqueName("lag");
            List<String> kept = new ArrayList<>();
            for (int i = 0; i < KEPT_TOPICS; i++) {
                kept.add(prefix + "-kept-" + i);
            }
            String solo = prefix + "-solo";
            String doomed = prefix + "-doomed";
            String reborn = prefix + "-reborn";
            List<NewTopic> topics = new ArrayList<>();
            kept.forEach(name -> topics.add(new NewTopic(name, 1, ReplicationClients.REPLICAS)));
            topics.add(new NewTopic(solo, Map.of(0, List.of(lagging))));
            topics.add(new NewTopic(doomed, 1, ReplicationClients.REPLICAS));
            topics.add(new NewTopic(reborn, 1, ReplicationClients.REPLICAS));
            admin.createTopics(topics).all().get(60, TimeUnit.SECONDS);
            List<String> all = new ArrayList<>(kept);
            all.addAll(List.of(doomed, reborn));
            ReplicationClients.awaitFullIsr(admin, all);
            ReplicationClients.awaitPartitions(admin, List.of(solo), "its one replica leading",
                    p -> p.leader() != null && p.leader().id() == lagging);
            all.add(solo);
            try (KafkaProducer<String, String> producer = producer(cluster)) {
                for (int i = 0; i < SOLO_RECORDS; i++) {
                    producer.send(new ProducerRecord<>(solo, 0, null, "solo-" + i));
                }
                for (String name : all) {
                    if (!name.equals(solo)) {
                        producer.send(new ProducerRecord<>(name, 0, null, "in-" + name)).get(30, TimeUnit.SECONDS);
                    }
                }
                producer.flush();
            }
            Set<String> liveBefore = partitionDirs(node.dataDir());
            assertThat(liveBefore).as("the lagging node's partition directories")
                    .containsAll(kept.stream().map(t -> t + "-0").toList())
                    .contains(solo + "-0", doomed + "-0", reborn + "-0");

            String oldRebornId = topicId(admin, reborn);

            // When: the node is killed (it stays registered, so the new topics are placed on it too, outside the
            // ISR, as Kafka places them); meanwhile one topic is deleted, one deleted and created again, one created
            node.kill();
            awaitFenced(admin, lagging);
            admin.deleteTopics(List.of(doomed, reborn)).all().get(60, TimeUnit.SECONDS);
            awaitGone(admin, List.of(doomed, reborn));
            String born = prefix + "-born";
            admin.createTopics(List.of(new NewTopic(reborn, 1, ReplicationClients.REPLICAS),
                    new NewTopic(born, 1, ReplicationClients.REPLICAS))).all().get(60, TimeUnit.SECONDS);
            // (the node that answers knows the new topic once it has applied the committed records, as in Kafka)
            String rebornId = await().atMost(STATE_TIMEOUT).pollInterval(Duration.ofMillis(250)).ignoreExceptions()
                    .until(() -> topicId(admin, reborn), id -> !id.equals(oldRebornId));
            // and it restarts with its metadata replay slowed down
            node.extraJvmArgs(List.of("-Dcairn.test.metadataApplyDelayMs=" + APPLY_DELAY_MS));
            long strayLinesBefore = node.logLinesContaining(STRAY_LINE).size();
            cluster.startNode(node);

            // Then: the delay was in force
            assertThat(node.logLinesContaining("cairn.test.metadataApplyDelayMs=" + APPLY_DELAY_MS))
                    .as("the node applies its metadata late").isNotEmpty();
            // and only the deleted topic's log was swept as stray; no live topic's log went
            List<String> strays = node.logLinesContaining(STRAY_LINE);
            List<String> sweptNow = strays.subList((int) strayLinesBefore, strays.size());
            System.out.printf("node %d after its lagging restart swept: %s%n", lagging, sweptNow);
            for (String name : kept) {
                assertThat(sweptNow).as("no stray sweep of the live topic %s", name)
                        .noneMatch(line -> line.contains(name + "-0"));
            }
            assertThat(sweptNow).as("no stray sweep of the live topic %s", solo)
                    .noneMatch(line -> line.contains(solo + "-0"));
            assertThat(sweptNow).as("the deleted topic's log swept as stray")
                    .anyMatch(line -> line.contains(doomed + "-0"));
            List<String> oldRebornLog = new ArrayList<>(node.logLinesContaining(OLDER_TOPIC_ID_LINE));
            oldRebornLog.addAll(sweptNow);
            assertThat(oldRebornLog).as("the re-created topic's old log deleted")
                    .anyMatch(line -> line.contains(reborn + "-0"));
            // the live logs are on disk, the deleted topic's is gone, the re-created topic's is the new topic's
            await().atMost(STATE_TIMEOUT).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
                Set<String> dirs = partitionDirs(node.dataDir());
                assertThat(dirs).as("the lagging node's partition directories")
                        .containsAll(kept.stream().map(t -> t + "-0").toList())
                        .contains(solo + "-0", reborn + "-0")
                        .doesNotContain(doomed + "-0");
                assertThat(Files.readString(node.dataDir().resolve(reborn + "-0").resolve("partition.metadata"),
                        StandardCharsets.UTF_8)).contains("topic_id: " + rebornId);
            });
            // the records only this node held are all there
            assertThat(readAll(cluster, solo)).as("the records of the topic whose only replica is the lagging node")
                    .hasSize(SOLO_RECORDS).doesNotHaveDuplicates();
            // and the node joins every ISR, of the old topics and of those created while it was down
            List<String> live = new ArrayList<>(kept);
            live.addAll(List.of(reborn, born));
            ReplicationClients.awaitFullIsr(admin, live);
        }
    }

    /** A node other than the active controller, so the quorum keeps its leader while the node is down. */
    private static int laggingNodeId(BrokerCluster cluster) {
        int controller = cluster.activeControllerId(STATE_TIMEOUT);
        return controller == ReplicationClients.NODES ? 1 : ReplicationClients.NODES;
    }

    /** The names of the partition directories in {@code dataDir} ({@code <topic>-<partition>}). */
    private static Set<String> partitionDirs(Path dataDir) throws IOException {
        try (Stream<Path> children = Files.list(dataDir)) {
            return children.filter(Files::isDirectory).map(p -> p.getFileName().toString())
                    .filter(name -> name.matches(".+-\\d+")).collect(Collectors.toSet());
        }
    }

    /** Waits until DescribeCluster no longer lists {@code nodeId}: its session expired and it is fenced. */
    private static void awaitFenced(Admin admin, int nodeId) {
        await().atMost(STATE_TIMEOUT).pollInterval(Duration.ofMillis(250)).ignoreExceptions().untilAsserted(() ->
                assertThat(admin.describeCluster().nodes().get(10, TimeUnit.SECONDS).stream().map(Node::id)
                        .toList()).as("the brokers DescribeCluster lists").doesNotContain(nodeId));
    }

    private static String topicId(Admin admin, String topic) throws Exception {
        return admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic).topicId()
                .toString();
    }

    private static void awaitGone(Admin admin, List<String> topics) {
        await().atMost(STATE_TIMEOUT).pollInterval(Duration.ofMillis(250)).ignoreExceptions().untilAsserted(() ->
                assertThat(admin.listTopics().names().get(10, TimeUnit.SECONDS)).doesNotContainAnyElementsOf(topics));
    }

    private static KafkaProducer<String, String> producer(BrokerCluster cluster) {
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    private static List<String> readAll(BrokerCluster cluster, String topic) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        TopicPartition partition = new TopicPartition(topic, 0);
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new StringDeserializer())) {
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            await().atMost(STATE_TIMEOUT).pollInSameThread().pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(1)).untilAsserted(() -> {
                        for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                            values.add(record.value());
                        }
                        assertThat(values).as("records read").hasSizeGreaterThanOrEqualTo(SOLO_RECORDS);
                    });
        }
        return values;
    }
}
