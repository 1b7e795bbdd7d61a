package io.cairn.compat.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.compat.harness.KafkaHalfInFaults;
import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Transactions on 3 nodes with the stock Java producer, against each kind: a replicated {@code __transaction_state}
 * (replication factor 3, min.isr 2, Kafka's defaults) and a topic whose partitions are led by different brokers, so
 * the coordinator writes most markers to other brokers over the inter-broker listener. A read_committed consumer
 * reads the committed transactions only, a read_uncommitted one every record.
 */
@Timeout(300)
@ExtendWith(BrokerLogsExtension.class)
class ReplicatedTransactionsIT {

    private static final int PARTITIONS = 3;
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @KafkaHalfInFaults
    void transactionsAcrossPartitionsOfEveryBrokerCommitAndAbortOnEveryLeader(BrokerKind kind) throws Exception {
        // Given
        try (BrokerCluster cluster = BrokerCluster.create(kind, ReplicationClients.NODES,
                ReplicationClients.clusterConfig()); Admin admin = ReplicationClients.startAndConnect(cluster)) {
            String topic = ReplicationClients.uniqueName("txn-replicated");
            ReplicationClients.createTopic(admin, topic, PARTITIONS, 2);

            // When: a committed, an aborted and another committed transaction over every partition
            try (KafkaProducer<String, String> producer = producer(cluster)) {
                producer.initTransactions();
                sendToEveryPartition(producer, topic, "committed-1");
                producer.commitTransaction();
                sendToEveryPartition(producer, topic, "aborted");
                producer.flush();
                producer.abortTransaction();
                sendToEveryPartition(producer, topic, "committed-2");
                producer.commitTransaction();
            }

            // Then
            List<String> committed = new ArrayList<>();
            List<String> all = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++) {
                committed.add("committed-1-" + p);
                committed.add("committed-2-" + p);
                all.add("aborted-" + p);
            }
            all.addAll(committed);
            assertThat(readToEnd(cluster, admin, topic, IsolationLevel.READ_COMMITTED))
                    .containsExactlyInAnyOrderElementsOf(committed);
            assertThat(readToEnd(cluster, admin, topic, IsolationLevel.READ_UNCOMMITTED))
                    .containsExactlyInAnyOrderElementsOf(all);
            ReplicationClients.awaitFullIsr(admin, List.of(topic, "__transaction_state"));
        }
    }

    private static Map<TopicPartition, Long> ends(Admin admin, Map<TopicPartition, OffsetSpec> latest,
                                                  IsolationLevel isolation) throws Exception {
        Map<TopicPartition, Long> ends = new HashMap<>();
        admin.listOffsets(latest, new ListOffsetsOptions(isolation)).all().get(30, TimeUnit.SECONDS)
                .forEach((tp, info) -> ends.put(tp, info.offset()));
        return ends;
    }

    private static void sendToEveryPartition(KafkaProducer<String, String> producer, String topic, String value) {
        producer.beginTransaction();
        for (int p = 0; p < PARTITIONS; p++) {
            producer.send(new ProducerRecord<>(topic, p, "k", value + "-" + p));
        }
    }

    private static KafkaProducer<String, String> producer(BrokerCluster cluster) {
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, ReplicationClients.uniqueName("txn-replicated"));
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 90_000);
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    /**
     * Every value a consumer with {@code isolation} reads from the beginning up to the end it may read, once the
     * markers of the ended transactions are written (the coordinator answers EndTxn before it writes them).
     */
    private static List<String> readToEnd(BrokerCluster cluster, Admin admin, String topic, IsolationLevel isolation)
            throws Exception {
        List<TopicPartition> partitions = new ArrayList<>();
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            partitions.add(new TopicPartition(topic, p));
            latest.put(partitions.get(p), OffsetSpec.latest());
        }
        await().atMost(TIMEOUT).until(() -> ends(admin, latest, IsolationLevel.READ_COMMITTED)
                .equals(ends(admin, latest, IsolationLevel.READ_UNCOMMITTED)));
        Map<TopicPartition, Long> ends = ends(admin, latest, isolation);
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation.toString());
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new StringDeserializer())) {
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))
                    && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    values.add(record.value());
                }
            }
        }
        return values;
    }
}
