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
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A 3-node cluster with one node down serves what Kafka serves (the internal topics at replication factor 3,
 * {@code min.insync.replicas=2}): a node is killed (SIGKILL) before either internal topic exists; the first consumer
 * group then reads every acks=all record of a replication-factor-3 topic, the first transactional producer commits
 * and read_committed sees it, and an auto-created topic (broker defaults: 3 partitions, replication factor 3)
 * takes acks=all writes. The new topics have their three replicas, the dead node outside the ISR and never leader
 * (Kafka's placer uses a fenced broker when the unfenced ones are too few). The node restarts and joins every ISR.
 * One cluster per kind for the whole scenario.
 */
@Timeout(420)
@ExtendWith(BrokerLogsExtension.class)
@Tag("faults")
class NodeDownIT {

    private static final int PARTITIONS = 3;
    private static final int BATCH = 200;
    private static final String OFFSETS_TOPIC = "__consumer_offsets";
    private static final String TRANSACTION_TOPIC = "__transaction_state";

    static Stream<BrokerKind> kinds() {
        return ReplicationClients.kinds();
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void groupsTransactionsAndAutoCreatedTopicsWorkWithANodeDownAndTheNodeRejoinsEveryIsr(BrokerKind kind)
            throws Exception {
        Map<String, String> config = BrokerSessions.quick(ReplicationClients.clusterConfig());
        config.put("min.insync.replicas", "2");
        config.put("num.partitions", Integer.toString(PARTITIONS));
        config.put("auto.create.topics.enable", "true");
        try (BrokerCluster cluster = BrokerCluster.create(kind, ReplicationClients.NODES, config);
             Admin admin = ReplicationClients.startAndConnect(cluster)) {
            // Given: RF-3 topics, one holding a first batch, then a node that is not the active controller killed
            String topic = ReplicationClients.uniqueName("nodedown");
            String txnTopic = ReplicationClients.uniqueName("nodedown-txn");
            ReplicationClients.createTopic(admin, topic, PARTITIONS, 2);
            ReplicationClients.createTopic(admin, txnTopic, PARTITIONS, 2);
            int dead = deadNodeId(cluster);
            Set<Integer> live = new HashSet<>(Set.of(1, 2, 3));
            live.remove(dead);
            try (KafkaProducer<String, String> producer = producer(cluster, null)) {
                produce(producer, topic, 0, BATCH);
                cluster.node(dead).kill();
                awaitFenced(admin, live);
                ReplicationClients.awaitPartitions(admin, List.of(topic), "a live leader and the live ISR",
                        p -> isLiveLeaderAndIsr(p, live));
                produce(producer, topic, BATCH, BATCH);
            }

            // When: the cluster's first consumer group reads the topic
            List<String> read = consumeAsNewGroup(cluster, topic, 2 * BATCH);
            // and the first transactional producer commits
            try (KafkaProducer<String, String> transactional = producer(cluster,
                    ReplicationClients.uniqueName("nodedown-tx"))) {
                transactional.initTransactions();
                transactional.beginTransaction();
                for (int p = 0; p < PARTITIONS; p++) {
                    transactional.send(new ProducerRecord<>(txnTopic, p, null, "committed-" + p));
                }
                transactional.commitTransaction();
            }
            List<String> committed = readCommitted(cluster, txnTopic, PARTITIONS);
            // and a producer writes to a topic that does not exist yet
            String autoTopic = ReplicationClients.uniqueName("nodedown-auto");
            try (KafkaProducer<String, String> producer = producer(cluster, null)) {
                produce(producer, autoTopic, 0, BATCH);
            }

            // Then
            assertThat(read).as("the first group reads every acknowledged record once")
                    .hasSize(2 * BATCH).doesNotHaveDuplicates();
            assertThat(committed).as("read_committed sees the committed transaction")
                    .containsExactlyInAnyOrder("committed-0", "committed-1", "committed-2");
            Map<String, TopicDescription> created = admin.describeTopics(List.of(OFFSETS_TOPIC, TRANSACTION_TOPIC,
                    autoTopic)).allTopicNames().get(30, TimeUnit.SECONDS);
            System.out.printf("%s: node %d down: %s%n", kind, dead, ReplicationClients.describe(created.values()));
            assertThat(created.get(autoTopic).partitions()).as("the auto-created topic has the broker defaults")
                    .hasSize(PARTITIONS);
            assertThat(created.values().stream().flatMap(d -> d.partitions().stream()))
                    .as("new topics: three replicas, the dead one outside the ISR and never leader")
                    .allSatisfy(p -> {
                        assertThat(ids(p.replicas())).containsExactlyInAnyOrder(1, 2, 3);
                        assertThat(isLiveLeaderAndIsr(p, live)).as("%s", p).isTrue();
                    });

            // When: the node comes back
            cluster.startNode(cluster.node(dead));

            // Then: it joins every ISR, of the data topics and of the internal topics
            ReplicationClients.awaitFullIsr(admin, List.of(topic, txnTopic, autoTopic, OFFSETS_TOPIC,
                    TRANSACTION_TOPIC));
        }
    }

    /** A node other than the active controller, so the quorum keeps its leader and the scenario stays short. */
    private static int deadNodeId(BrokerCluster cluster) {
        int controller = cluster.activeControllerId(STATE_TIMEOUT);
        return controller == ReplicationClients.NODES ? 1 : ReplicationClients.NODES;
    }

    /** Waits until DescribeCluster lists only {@code live}: the dead node's session expired and it is fenced. */
    private static void awaitFenced(Admin admin, Set<Integer> live) {
        await().atMost(STATE_TIMEOUT).pollInterval(Duration.ofMillis(250)).ignoreExceptions().untilAsserted(() ->
                assertThat(admin.describeCluster().nodes().get(10, TimeUnit.SECONDS).stream().map(Node::id)
                        .collect(Collectors.toSet())).as("the brokers DescribeCluster lists").isEqualTo(live));
    }

    private static boolean isLiveLeaderAndIsr(TopicPartitionInfo partition, Set<Integer> live) {
        return partition.leader() != null && live.contains(partition.leader().id())
                && new HashSet<>(ids(partition.isr())).equals(live);
    }

    private static List<String> consumeAsNewGroup(BrokerCluster cluster, String topic, int count) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, ReplicationClients.uniqueName("nodedown-group"));
        props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new StringDeserializer())) {
            consumer.subscribe(List.of(topic));
            await().atMost(STATE_TIMEOUT).pollInSameThread().pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(1)).untilAsserted(() -> {
                        for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                            values.add(record.value());
                        }
                        assertThat(values).as("records the group read").hasSizeGreaterThanOrEqualTo(count);
                    });
            consumer.commitSync(Duration.ofSeconds(30));
        }
        return values;
    }

    private static List<String> readCommitted(BrokerCluster cluster, String topic, int count) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, IsolationLevel.READ_COMMITTED.toString());
        List<TopicPartition> partitions = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
            partitions.add(new TopicPartition(topic, p));
        }
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new StringDeserializer())) {
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            await().atMost(STATE_TIMEOUT).pollInSameThread().pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(1)).untilAsserted(() -> {
                        for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                            values.add(record.value());
                        }
                        assertThat(values).as("committed records read").hasSizeGreaterThanOrEqualTo(count);
                    });
        }
        return values;
    }

    private static void produce(KafkaProducer<String, String> producer, String topic, int from, int count)
            throws Exception {
        List<Future<?>> sends = new ArrayList<>();
        for (int i = from; i < from + count; i++) {
            sends.add(producer.send(new ProducerRecord<>(topic, Integer.toString(i), "record-" + i)));
        }
        producer.flush();
        for (Future<?> send : sends) {
            send.get(120, TimeUnit.SECONDS);
        }
    }

    private static KafkaProducer<String, String> producer(BrokerCluster cluster, String transactionalId) {
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 90_000);
        if (transactionalId != null) {
            props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        }
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    private static List<Integer> ids(List<Node> nodes) {
        return nodes.stream().map(Node::id).toList();
    }
}
