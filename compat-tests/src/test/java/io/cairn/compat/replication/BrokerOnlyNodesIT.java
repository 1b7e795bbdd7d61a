package io.cairn.compat.replication;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.compat.harness.KafkaHalfInFaults;
import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.ClusterNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
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
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Kafka's production layout with more than one broker-only node: nodes 1-3 are the voters (and brokers), nodes 4
 * and 5 brokers only (a Cairn one follows the metadata log as a Ratis listener). A topic created once every node
 * runs has partitions led by and replicated to each broker-only node: every partition reaches a full ISR (each
 * follower learnt of its replica from its own metadata), takes acks=all records on its leader and serves them back.
 */
@Timeout(600)
@ExtendWith(BrokerLogsExtension.class)
class BrokerOnlyNodesIT {

    private static final int NODES = 5;
    private static final int VOTERS = 3;

    @KafkaHalfInFaults
    void everyBrokerOnlyNodeFollowsTheMetadataOfTopicsCreatedAfterItJoined(BrokerKind kind) throws Exception {
        // Given three voters and two broker-only nodes, all running
        try (BrokerCluster cluster = BrokerCluster.create(kind, NODES, Map.of(), node -> layout(kind, node));
             Admin admin = ReplicationClients.startAndConnect(cluster)) {
            String topic = ReplicationClients.uniqueName("broker-only");
            Map<Integer, List<Integer>> assignment = Map.of(0, List.of(4, 5, 1), 1, List.of(5, 4, 2),
                    2, List.of(1, 4, 5));

            // When a topic is created whose replicas are on both broker-only nodes
            admin.createTopics(List.of(new NewTopic(topic, assignment))).all().get(60, TimeUnit.SECONDS);

            // Then every partition has its first replica as leader and a full ISR
            ReplicationClients.awaitPartitions(admin, List.of(topic), "its preferred leader and a full ISR",
                    p -> p.leader() != null && p.leader().id() == assignment.get(p.partition()).get(0)
                            && p.isr().size() == assignment.get(p.partition()).size());
            assertThat(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).stream().map(Node::id).sorted())
                    .containsExactly(1, 2, 3, 4, 5);
            // and each partition takes an acks=all record on its leader and serves it back
            produce(cluster.bootstrapServers(), topic, assignment.size());
            assertThat(consume(cluster.bootstrapServers(), topic, assignment.size()))
                    .as("records read back on %s", kind).containsExactly("record-0", "record-1", "record-2");
        }
    }

    /** Nodes 1-3 are the voters; nodes 4 and 5 brokers only, as in {@code EligibleLeaderReplicasIT}. */
    private static Map<String, String> layout(BrokerKind kind, ClusterNode node) {
        Map<String, String> settings = new LinkedHashMap<>();
        List<String> voters = Arrays.asList(node.voters().split(","));
        settings.put("controller.quorum.voters", String.join(",", voters.subList(0, VOTERS)));
        settings.put("offsets.topic.replication.factor", "3");
        if (node.nodeId() > VOTERS) {
            String host = voters.get(0).substring(voters.get(0).indexOf('@') + 1, voters.get(0).lastIndexOf(':'));
            settings.put("process.roles", "broker");
            settings.put("listeners", "PLAINTEXT://" + host + ":" + node.clientPort());
            if (kind == BrokerKind.CAIRN) {
                settings.put("metadata.listener.port", Integer.toString(node.controllerPort()));
            }
        }
        return settings;
    }

    private static void produce(String bootstrap, String topic, int partitions) throws Exception {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 60_000);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props, new StringSerializer(),
                new StringSerializer())) {
            for (int p = 0; p < partitions; p++) {
                producer.send(new ProducerRecord<>(topic, p, null, "record-" + p)).get(60, TimeUnit.SECONDS);
            }
        }
    }

    /** Every record of {@code topic}, partition by partition. */
    private static List<String> consume(String bootstrap, String topic, int partitions) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new StringDeserializer())) {
            for (int p = 0; p < partitions; p++) {
                TopicPartition partition = new TopicPartition(topic, p);
                consumer.assign(List.of(partition));
                consumer.seekToBeginning(List.of(partition));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                List<String> read = new ArrayList<>();
                while (read.isEmpty() && System.nanoTime() < deadline) {
                    for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                        read.add(record.value());
                    }
                }
                values.addAll(read);
            }
        }
        return values;
    }
}
