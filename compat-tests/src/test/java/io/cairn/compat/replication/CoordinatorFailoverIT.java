package io.cairn.compat.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerSessions;
import io.cairn.testkit.FaultProxy;
import io.cairn.testkit.FreePorts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaException;
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
 * The transaction coordinator's failover on 3 nodes of each kind ({@code __transaction_state} at replication factor
 * 3, min.isr 2): the broker leading the transactional id's {@code __transaction_state} partition (DescribeTransactions'
 * coordinator) is SIGKILLed, the partition's new leader loads the transactions, and the stock producer goes on.
 * Whatever the producer is told, a read_committed reader sees every transaction whole or not at all.
 */
@Timeout(600)
@ExtendWith(BrokerLogsExtension.class)
@Tag("faults")
class CoordinatorFailoverIT {

    private static final int PARTITIONS = 3;
    private static final Duration TIMEOUT = ReplicationClients.STATE_TIMEOUT;

    static Stream<BrokerKind> kinds() {
        return ReplicationClients.kinds();
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void aTransactionOpenWhenItsCoordinatorIsKilledEndsWholeAtTheNewCoordinator(BrokerKind kind) throws Exception {
        // Given: a committed transaction, then one with a record on every partition, flushed, not yet committed
        try (BrokerCluster cluster = BrokerCluster.create(kind, ReplicationClients.NODES,
                BrokerSessions.quick(ReplicationClients.clusterConfig()));
             Admin admin = ReplicationClients.startAndConnect(cluster)) {
            String topic = ReplicationClients.uniqueName("txn-failover");
            ReplicationClients.createTopic(admin, topic, PARTITIONS, 2);
            String transactionalId = ReplicationClients.uniqueName("txn-failover");
            KafkaProducer<String, String> producer = producer(cluster, transactionalId);
            try {
                producer.initTransactions();
                producer.beginTransaction();
                sendToEveryPartition(producer, topic, "committed-1");
                producer.commitTransaction();
                producer.beginTransaction();
                sendToEveryPartition(producer, topic, "open");
                producer.flush();
                int coordinator = describe(admin, transactionalId).coordinatorId();

                // When: its coordinator is killed and the producer commits
                cluster.node(coordinator).kill();
                String outcome = "committed";
                try {
                    producer.commitTransaction();
                } catch (KafkaException commitFailure) {
                    outcome = "commit failed (" + commitFailure + "), then ";
                    try {
                        producer.abortTransaction();
                        outcome += "aborted";
                    } catch (KafkaException fatal) {
                        // a fatal error: a new instance takes over the id, which aborts the open transaction
                        producer.close(Duration.ofSeconds(10));
                        producer = producer(cluster, transactionalId);
                        producer.initTransactions();
                        outcome += "abort failed (" + fatal + "), a new producer took over";
                    }
                }
                producer.beginTransaction();
                sendToEveryPartition(producer, topic, "committed-3");
                producer.commitTransaction();
                System.out.printf("%s: coordinator %d killed with a transaction open: %s%n", kind, coordinator,
                        outcome);

                // Then: the open transaction is there whole when the commit succeeded, else whole or not at all
                List<String> read = readCommitted(cluster, topic);
                List<String> open = values("open");
                assertThat(read).as("read_committed after: %s", outcome)
                        .containsAll(values("committed-1")).containsAll(values("committed-3"));
                List<String> seenOpen = read.stream().filter(open::contains).sorted().toList();
                if (outcome.equals("committed")) {
                    assertThat(seenOpen).as("the open transaction after: %s", outcome).isEqualTo(open);
                } else {
                    assertThat(seenOpen).as("the open transaction after: %s", outcome).isIn(open, List.of());
                }
                assertThat(read).hasSize(2 * PARTITIONS + seenOpen.size());
            } finally {
                producer.close(Duration.ofSeconds(10));
            }
        }
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void aTransactionInPrepareCommitWhenItsCoordinatorIsKilledIsCompletedByTheNewCoordinator(BrokerKind kind)
            throws Exception {
        // Given: node i's inter-broker listener behind proxies[i-1], so a leader can be cut off from markers
        int[] replication = FreePorts.freePorts(ReplicationClients.NODES);
        List<FaultProxy> proxies = new ArrayList<>();
        try {
            for (int port : replication) {
                proxies.add(FaultProxy.start(0, FreePorts.LOOPBACK, port));
            }
            try (BrokerCluster cluster = BrokerCluster.create(kind, ReplicationClients.NODES,
                    BrokerSessions.quick(ReplicationClients.clusterConfig()),
                    node -> ReplicationClients.proxiedReplicationListener(node, replication[node.nodeId() - 1],
                            proxies.get(node.nodeId() - 1).port()));
                 Admin admin = ReplicationClients.startAndConnect(cluster)) {
                String topic = ReplicationClients.uniqueName("txn-prepared");
                ReplicationClients.createTopic(admin, topic, PARTITIONS, 2);
                String transactionalId = ReplicationClients.uniqueName("txn-prepared");
                try (KafkaProducer<String, String> producer = producer(cluster, transactionalId)) {
                    producer.initTransactions();
                    producer.beginTransaction();
                    sendToEveryPartition(producer, topic, "prepared");
                    producer.flush();
                    int coordinator = describe(admin, transactionalId).coordinatorId();
                    int cutOff = otherLeader(admin, topic, coordinator);
                    // the markers for the partitions cutOff leads cannot reach it: the transaction stays prepared
                    proxies.get(cutOff - 1).partition();
                    producer.commitTransaction();
                    assertThat(describe(admin, transactionalId).state()).as("with broker %d's markers held", cutOff)
                            .isEqualTo(TransactionState.PREPARE_COMMIT);

                    // When: the coordinator dies with the transaction in PrepareCommit, and the cut-off leader is
                    // reachable again
                    cluster.node(coordinator).kill();
                    proxies.get(cutOff - 1).heal();

                    // Then: the new coordinator completes it, and every record of it is committed
                    await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(250)).ignoreExceptions().untilAsserted(
                            () -> assertThat(describe(admin, transactionalId)).satisfies(d -> {
                                assertThat(d.coordinatorId()).isNotEqualTo(coordinator);
                                assertThat(d.state()).isEqualTo(TransactionState.COMPLETE_COMMIT);
                            }));
                    System.out.printf("%s: coordinator %d killed in PrepareCommit (markers to %d held), completed by "
                            + "%d%n", kind, coordinator, cutOff, describe(admin, transactionalId).coordinatorId());
                    assertThat(readCommitted(cluster, topic)).containsExactlyInAnyOrderElementsOf(
                            values("prepared"));
                }
            }
        } finally {
            proxies.forEach(FaultProxy::close);
        }
    }

    /** The leader of some partition of {@code topic} other than {@code broker}. */
    private static int otherLeader(Admin admin, String topic, int broker) throws Exception {
        for (TopicPartitionInfo partition : ReplicationClients.partitions(admin, topic)) {
            if (partition.leader().id() != broker) {
                return partition.leader().id();
            }
        }
        throw new AssertionError("every partition of " + topic + " is led by " + broker);
    }

    private static TransactionDescription describe(Admin admin, String transactionalId) throws Exception {
        return admin.describeTransactions(List.of(transactionalId)).description(transactionalId)
                .get(30, TimeUnit.SECONDS);
    }

    private static List<String> values(String prefix) {
        List<String> values = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
            values.add(prefix + "-" + p);
        }
        return values;
    }

    private static void sendToEveryPartition(KafkaProducer<String, String> producer, String topic, String prefix) {
        for (int p = 0; p < PARTITIONS; p++) {
            producer.send(new ProducerRecord<>(topic, p, "k", prefix + "-" + p));
        }
    }

    private static KafkaProducer<String, String> producer(BrokerCluster cluster, String transactionalId) {
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 120_000);
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 30_000);
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 120_000);
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    /**
     * Every value a read_committed consumer reads from the beginning, once no transaction holds an LSO back. The
     * offsets come from an Admin of its own: the scenario's Admin may have cached the killed node as a partition's
     * leader (kafka-clients 4.1's listOffsets keeps a partition-leader cache), and its listOffsets then waits its whole
     * timeout for that node, on either broker kind.
     */
    private static List<String> readCommitted(BrokerCluster cluster, String topic) throws Exception {
        List<TopicPartition> partitions = new ArrayList<>();
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            partitions.add(new TopicPartition(topic, p));
            latest.put(partitions.get(p), OffsetSpec.latest());
        }
        Map<TopicPartition, Long> ends;
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                cluster.bootstrapServers()))) {
            await().atMost(TIMEOUT).ignoreExceptions().until(() -> ends(admin, latest, IsolationLevel.READ_COMMITTED)
                    .equals(ends(admin, latest, IsolationLevel.READ_UNCOMMITTED)));
            ends = ends(admin, latest, IsolationLevel.READ_COMMITTED);
        }
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, IsolationLevel.READ_COMMITTED.toString());
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new StringDeserializer())) {
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))) {
                assertThat(System.nanoTime()).as("read %s to %s within %s", topic, ends, TIMEOUT)
                        .isLessThan(deadline);
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    values.add(record.value());
                }
            }
        }
        return values;
    }

    private static Map<TopicPartition, Long> ends(Admin admin, Map<TopicPartition, OffsetSpec> latest,
                                                  IsolationLevel isolation) throws Exception {
        Map<TopicPartition, Long> ends = new HashMap<>();
        admin.listOffsets(latest, new ListOffsetsOptions(isolation)).all().get(30, TimeUnit.SECONDS)
                .forEach((tp, info) -> ends.put(tp, info.offset()));
        return ends;
    }
}
