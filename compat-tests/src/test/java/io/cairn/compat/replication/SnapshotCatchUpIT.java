package io.cairn.compat.replication;

import static io.cairn.compat.replication.ReplicationClients.NODES;
import static io.cairn.compat.replication.ReplicationClients.REPLICAS;
import static io.cairn.compat.replication.ReplicationClients.STATE_TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.RawKafkaClient;
import io.cairn.testkit.Signals;
import io.cairn.wire.message.DescribeQuorumRequestData;
import io.cairn.wire.message.DescribeQuorumResponseData;
import io.cairn.wire.message.MetadataRequestData;
import io.cairn.wire.message.MetadataResponseData;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.QuorumInfo;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A follower voter of a 3-node Cairn cluster (combined nodes) falls behind while the quorum's leader snapshots its
 * metadata log and purges the entries the follower still needs ({@code metadata.snapshot.entries=8}, small Raft log
 * segments through Kafka's test-only {@code internal.metadata.log.segment.bytes}), so it can only catch up by
 * installing the leader's snapshot. Meanwhile a topic it holds a log of is deleted and new topics are created. It
 * must install the snapshot and go on (Ratis pauses the state machine for the install and reloads only a paused one:
 * without that the node closed its metadata division and its image froze): it serves the new topics, no longer the
 * deleted one, whose log it removes, and joins the new topics' ISRs. Once killed and restarted, once paused (SIGSTOP)
 * and resumed with its broker running, where only the update the install publishes (the difference between its image
 * and the snapshot's) removes the deleted topic's log. Cairn only: the Raft log's purge is Cairn's.
 */
@Timeout(600)
@ExtendWith(BrokerLogsExtension.class)
@Tag("faults")
class SnapshotCatchUpIT {

    /** Where a node's Raft log segments are: Ratis' group directory in the metadata log dir (the data dir here). */
    private static final String RAFT_LOG_DIR = "__cluster_metadata-0/ca125000-0000-4000-8000-00000000da7a/current";
    /** What a node logs once it loaded the snapshot the leader installed on it. */
    private static final String INSTALLED_LINE = "Installed the leader's metadata snapshot";
    private static final short METADATA_VERSION = 12;
    /** At most this many topics are created to make the leader purge past the lagging node's log. */
    private static final int MAX_NEW_TOPICS = 200;
    /**
     * How far past the lagging node's log end the leader's log must start: a paused node's socket buffers may hold
     * appends the leader sent before it purged (Ratis has up to 8 in flight per follower), which it takes on resuming.
     */
    private static final long PURGE_MARGIN = 64;

    @Test
    void aFollowerVoterRestartedBehindTheLeadersPurgedLogCatchesUpFromItsSnapshot() throws Exception {
        try (BrokerCluster cluster = BrokerCluster.create(BrokerKind.CAIRN, NODES, config());
             Admin admin = ReplicationClients.startAndConnect(cluster)) {
            // Given: two topics on every node, one of them to be deleted while a follower voter is down
            int leader = cluster.activeControllerId(STATE_TIMEOUT);
            int lagging = leader == NODES ? 1 : NODES;
            BrokerProcess node = cluster.node(lagging);
            String prefix = ReplicationClients.uniqueName("snap");
            String kept = prefix + "-kept";
            String doomed = prefix + "-doomed";
            createOnEveryNode(admin, kept, doomed);
            assertThat(partitionDirs(node)).contains(kept + "-0", doomed + "-0");

            // When: the follower voter is killed; the doomed topic is deleted and topics are created until the
            // leader purged its log past the follower's end
            node.kill();
            long laggingEnd = logEnd(admin, leader);
            awaitFenced(admin, lagging);
            admin.deleteTopics(List.of(doomed)).all().get(60, TimeUnit.SECONDS);
            List<String> born = createUntilPurged(admin, cluster.node(leader), prefix, laggingEnd,
                    name -> new NewTopic(name, 1, REPLICAS));
            // and the follower restarts
            cluster.startNode(node);

            // Then: it installed the leader's snapshot
            await().atMost(STATE_TIMEOUT).untilAsserted(() -> assertThat(node.logLinesContaining(INSTALLED_LINE))
                    .as("node %d installed the leader's snapshot", lagging).isNotEmpty());
            // and serves the topics created while it was down, not the deleted one, whose log it removed
            List<String> live = new ArrayList<>(born);
            live.add(kept);
            awaitServes(node, live, doomed);
            await().atMost(STATE_TIMEOUT).pollInterval(Duration.ofMillis(250)).untilAsserted(() ->
                    assertThat(partitionDirs(node)).contains(kept + "-0").doesNotContain(doomed + "-0"));
            // and it follows and serves the new topics: it joins their ISRs, and records produced through it
            // (acks=all) are read back
            ReplicationClients.awaitFullIsr(admin, live);
            assertProducesThrough(node, born.get(born.size() - 1));
            assertProducesThrough(node, kept);
        }
    }

    @Test
    void aFollowerVoterPausedBehindTheLeadersPurgedLogInstallsItsSnapshotAndRemovesTheDeletedTopicsLogs()
            throws Exception {
        try (BrokerCluster cluster = BrokerCluster.create(BrokerKind.CAIRN, NODES, config());
             Admin admin = ReplicationClients.startAndConnect(cluster)) {
            // Given: two topics on every node, one of them to be deleted while a follower voter is paused
            int leader = cluster.activeControllerId(STATE_TIMEOUT);
            int lagging = leader == NODES ? 1 : NODES;
            int other = 6 - leader - lagging;
            BrokerProcess node = cluster.node(lagging);
            long pid = node.pid();
            String prefix = ReplicationClients.uniqueName("snappause");
            String kept = prefix + "-kept";
            String doomed = prefix + "-doomed";
            createOnEveryNode(admin, kept, doomed);
            assertThat(partitionDirs(node)).contains(kept + "-0", doomed + "-0");

            // When: the follower voter's process is paused; the doomed topic is deleted and topics (on the two
            // other nodes) are created until the leader purged its log past the follower's end
            signal(node, "STOP");
            List<String> born;
            try {
                // (asked of the leader alone: a client may wait on the paused node until its request times out)
                BrokerProcess leaderNode = cluster.node(leader);
                long laggingEnd = logEnd(leaderNode, leader);
                awaitFenced(leaderNode, lagging);
                try (Admin quorum = admin(leaderNode)) {
                    quorum.deleteTopics(List.of(doomed)).all().get(60, TimeUnit.SECONDS);
                    born = createUntilPurged(quorum, leaderNode, prefix, laggingEnd,
                            name -> new NewTopic(name, Map.of(0, List.of(leader, other))));
                }
            } finally {
                // and it resumes, its broker still running
                signal(node, "CONT");
            }

            // Then: it installed the leader's snapshot, without a restart
            await().atMost(STATE_TIMEOUT).untilAsserted(() -> assertThat(node.logLinesContaining(INSTALLED_LINE))
                    .as("node %d installed the leader's snapshot", lagging).isNotEmpty());
            assertThat(node.pid()).isEqualTo(pid);
            // and removed the deleted topic's log, which only the install's update told it of
            await().atMost(STATE_TIMEOUT).pollInterval(Duration.ofMillis(250)).untilAsserted(() ->
                    assertThat(partitionDirs(node)).contains(kept + "-0").doesNotContain(doomed + "-0"));
            // and serves the topics created meanwhile, not the deleted one
            List<String> live = new ArrayList<>(born);
            live.add(kept);
            awaitServes(node, live, doomed);
            // and records produced through it (acks=all, its replica back in the ISR) are read back
            ReplicationClients.awaitFullIsr(admin, List.of(kept));
            assertProducesThrough(node, kept);
            assertProducesThrough(node, born.get(born.size() - 1));
        }
    }

    private static Map<String, String> config() {
        Map<String, String> config = new HashMap<>(ReplicationClients.clusterConfig());
        config.put("metadata.snapshot.entries", "8");
        config.put("internal.metadata.log.segment.bytes", "2048");
        return config;
    }

    /** Creates the topics, one partition on every node, and waits for their full ISRs and a record each. */
    private static void createOnEveryNode(Admin admin, String... topics) throws Exception {
        List<NewTopic> created = Stream.of(topics).map(name -> new NewTopic(name, 1, REPLICAS)).toList();
        admin.createTopics(created).all().get(60, TimeUnit.SECONDS);
        ReplicationClients.awaitFullIsr(admin, List.of(topics));
        try (KafkaProducer<String, String> producer = producer(admin)) {
            for (String topic : topics) {
                producer.send(new ProducerRecord<>(topic, 0, null, "before-" + topic)).get(30, TimeUnit.SECONDS);
            }
        }
    }

    /**
     * Creates topics one at a time until the leader's Raft log starts well above {@code laggingEnd} (it snapshotted
     * and purged the entries a node whose log ends there still needs, and those it may have sent it); returns their
     * names.
     */
    private static List<String> createUntilPurged(Admin admin, BrokerProcess leader, String prefix, long laggingEnd,
                                                  Function<String, NewTopic> topic)
            throws Exception {
        List<String> born = new ArrayList<>();
        while (firstRaftIndex(leader) <= laggingEnd + PURGE_MARGIN) {
            assertThat(born).as("topics created before the leader purged its log past %d (its log starts at %d)",
                    laggingEnd, firstRaftIndex(leader)).hasSizeLessThan(MAX_NEW_TOPICS);
            String name = prefix + "-born-" + born.size();
            admin.createTopics(List.of(topic.apply(name))).all().get(60, TimeUnit.SECONDS);
            born.add(name);
        }
        System.out.printf("the leader's Raft log starts at %d after %d new topics (the lagging node's ends by %d)%n",
                firstRaftIndex(leader), born.size(), laggingEnd);
        return born;
    }

    /** The first index of the node's Raft log: the lowest start of its segment files. */
    private static long firstRaftIndex(BrokerProcess node) throws IOException {
        try (Stream<Path> files = Files.list(node.dataDir().resolve(RAFT_LOG_DIR))) {
            return files.map(p -> p.getFileName().toString()).filter(name -> name.startsWith("log_"))
                    .mapToLong(name -> Long.parseLong(name.replace("log_inprogress_", "").replace("log_", "")
                            .split("-")[0]))
                    .min().orElse(-1);
        }
    }

    /** The leader's metadata log end as DescribeQuorum gives it: every other node's log ends at or below it. */
    private static long logEnd(Admin admin, int leader) throws Exception {
        QuorumInfo quorum = admin.describeMetadataQuorum().quorumInfo().get(30, TimeUnit.SECONDS);
        assertThat(quorum.leaderId()).isEqualTo(leader);
        return quorum.voters().stream().filter(v -> v.replicaId() == leader).findFirst().orElseThrow()
                .logEndOffset();
    }

    /** Waits until the node's Metadata answer lists every topic of {@code live} with a leader, and not {@code gone}. */
    private static void awaitServes(BrokerProcess node, List<String> live, String gone) {
        await().atMost(STATE_TIMEOUT).pollInterval(Duration.ofMillis(250)).ignoreExceptions().untilAsserted(() -> {
            try (RawKafkaClient client = RawKafkaClient.connect(node)) {
                MetadataResponseData response = client.sendAndReceive(new MetadataRequestData().setTopics(null)
                        .setAllowAutoTopicCreation(false), METADATA_VERSION, Duration.ofSeconds(10));
                Map<String, MetadataResponseData.MetadataResponseTopic> topics = response.topics().stream()
                        .collect(Collectors.toMap(MetadataResponseData.MetadataResponseTopic::name, t -> t));
                assertThat(topics).as("the topics node %s serves", node.name())
                        .containsKeys(live.toArray(String[]::new)).doesNotContainKey(gone);
                for (String name : live) {
                    assertThat(topics.get(name).errorCode()).isZero();
                    assertThat(topics.get(name).partitions()).singleElement()
                            .satisfies(p -> assertThat(p.leaderId()).isNotNegative());
                }
            }
        });
    }

    /** A record produced (acks=all) by a producer that knows only {@code node} is read back from the topic. */
    private static void assertProducesThrough(BrokerProcess node, String topic) throws Exception {
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, node.bootstrapServers());
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        String value = "through-" + node.name() + "-" + System.nanoTime();
        RecordMetadata sent;
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props, new StringSerializer(),
                new StringSerializer())) {
            sent = producer.send(new ProducerRecord<>(topic, 0, null, value)).get(60, TimeUnit.SECONDS);
        }
        Map<String, Object> consumerProps = new HashMap<>();
        consumerProps.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, node.bootstrapServers());
        consumerProps.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        TopicPartition partition = new TopicPartition(topic, 0);
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps, new StringDeserializer(),
                new StringDeserializer())) {
            consumer.assign(List.of(partition));
            consumer.seek(partition, sent.offset());
            List<String> values = new ArrayList<>();
            await().atMost(STATE_TIMEOUT).pollInSameThread().untilAsserted(() -> {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    values.add(record.value());
                }
                assertThat(values).as("records read from %s at offset %d", topic, sent.offset()).contains(value);
            });
        }
    }

    private static KafkaProducer<String, String> producer(Admin admin) throws Exception {
        String bootstrap = admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).stream()
                .map(n -> n.host() + ":" + n.port()).collect(Collectors.joining(","));
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    /** DescribeQuorum asked of {@code node} alone: the leader's log end, every other node's ends at or below it. */
    private static long logEnd(BrokerProcess node, int leader) {
        try (RawKafkaClient client = RawKafkaClient.connect(node)) {
            DescribeQuorumResponseData quorum = client.sendAndReceive(new DescribeQuorumRequestData()
                    .setTopics(List.of(new DescribeQuorumRequestData.TopicData().setTopicName("__cluster_metadata")
                            .setPartitions(List.of(new DescribeQuorumRequestData.PartitionData())))),
                    (short) 0, Duration.ofSeconds(10));
            DescribeQuorumResponseData.PartitionData partition = quorum.topics().get(0).partitions().get(0);
            assertThat(partition.leaderId()).isEqualTo(leader);
            return partition.currentVoters().stream().filter(v -> v.replicaId() == leader).findFirst()
                    .orElseThrow().logEndOffset();
        }
    }

    /** Waits until {@code node}'s Metadata answer no longer lists broker {@code nodeId}: it is fenced. */
    private static void awaitFenced(BrokerProcess node, int nodeId) {
        await().atMost(STATE_TIMEOUT).pollInterval(Duration.ofMillis(250)).ignoreExceptions().untilAsserted(() -> {
            try (RawKafkaClient client = RawKafkaClient.connect(node)) {
                MetadataResponseData response = client.sendAndReceive(new MetadataRequestData()
                        .setTopics(List.of()).setAllowAutoTopicCreation(false), METADATA_VERSION,
                        Duration.ofSeconds(10));
                assertThat(response.brokers().stream().map(MetadataResponseData.MetadataResponseBroker::nodeId)
                        .toList()).as("the brokers node %s lists", node.name()).doesNotContain(nodeId);
            }
        });
    }

    /** An Admin that knows {@code node} alone to begin with (its Metadata lists the unfenced brokers only). */
    private static Admin admin(BrokerProcess node) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, node.bootstrapServers());
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 15_000);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
        return Admin.create(props);
    }

    /** The names of the node's partition directories ({@code <topic>-<partition>}). */
    private static Set<String> partitionDirs(BrokerProcess node) throws IOException {
        try (Stream<Path> children = Files.list(node.dataDir())) {
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

    private static void signal(BrokerProcess node, String signal) {
        Signals.send(node.pid(), signal);
    }
}
