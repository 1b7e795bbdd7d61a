package io.cairn.compat.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.compat.harness.KafkaHalfInFaults;
import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.RawKafkaClient;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.FetchRequestData;
import io.cairn.wire.message.FetchResponseData;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Fetch from the closest replica (KIP-392) on a three-node cluster whose nodes sit in racks r1, r2 and r3, with
 * {@code replica.selector.class} set to Kafka's {@code RackAwareReplicaSelector}: for a partition led by node 1, a
 * raw consumer Fetch with {@code rack_id} r2 gets {@code preferred_read_replica} 2 from the leader and no records,
 * one without a rack gets the records; follower node 2 serves a consumer's v12 Fetch from its own log (and refuses a
 * v10 one, which only a leader may answer); a stock consumer with {@code client.rack=r2} reads every record, and its
 * {@code preferred-read-replica} metric names node 2. The same scenario runs against Cairn and the reference Kafka.
 */
@Timeout(600)
@ExtendWith(BrokerLogsExtension.class)
class FetchFromFollowerIT {

    private static final int RECORDS = 2_000;
    /** Fetch v12: topic names, and the client metadata ({@code rack_id}) of v11+. */
    private static final short FETCH_WITH_RACK = 12;
    /** Fetch v10: before KIP-392, so only the leader may answer it. */
    private static final short FETCH_BEFORE_RACK = 10;
    private static final Duration TIMEOUT = ReplicationClients.STATE_TIMEOUT;

    @KafkaHalfInFaults
    void aConsumerInRackR2ReadsEveryRecordFromTheFollowerInR2(BrokerKind kind) throws Exception {
        Map<String, String> config = ReplicationClients.clusterConfig();
        config.put("replica.selector.class", "org.apache.kafka.common.replica.RackAwareReplicaSelector");
        try (BrokerCluster cluster = BrokerCluster.create(kind, ReplicationClients.NODES, config,
                node -> Map.of("broker.rack", "r" + node.nodeId()));
             Admin admin = ReplicationClients.startAndConnect(cluster)) {
            // Given: a partition led by node 1, replicated to nodes 2 and 3, with every record in sync
            String topic = ReplicationClients.uniqueName("closest");
            admin.createTopics(List.of(new NewTopic(topic, Map.of(0, List.of(1, 2, 3))))).all()
                    .get(60, TimeUnit.SECONDS);
            ReplicationClients.awaitFullIsr(admin, List.of(topic));
            List<String> expected = produce(cluster.bootstrapServers(), topic);
            awaitFollowerHighWatermark(cluster.node(2), topic, RECORDS);

            // Then: the leader sends a consumer of rack r2 to node 2, and serves one without a rack itself
            try (RawKafkaClient leader = RawKafkaClient.connect(cluster.node(1))) {
                Answer redirected = fetch(leader, topic, "r2", FETCH_WITH_RACK);
                assertThat(redirected.errorCode()).isEqualTo(Errors.NONE.code());
                assertThat(redirected.preferredReadReplica()).isEqualTo(2);
                assertThat(redirected.recordBytes()).isZero();
                assertThat(redirected.highWatermark()).isEqualTo(RECORDS);
                Answer served = fetch(leader, topic, "", FETCH_WITH_RACK);
                assertThat(served.preferredReadReplica()).isEqualTo(-1);
                assertThat(served.recordBytes()).isPositive();
                Answer sameRack = fetch(leader, topic, "r1", FETCH_WITH_RACK);
                assertThat(sameRack.preferredReadReplica()).isEqualTo(-1);
                assertThat(sameRack.recordBytes()).isPositive();
            }
            // And: the follower serves a consumer's fetch, but not one of a version before KIP-392
            try (RawKafkaClient follower = RawKafkaClient.connect(cluster.node(2))) {
                Answer read = fetch(follower, topic, "r2", FETCH_WITH_RACK);
                assertThat(read.errorCode()).isEqualTo(Errors.NONE.code());
                assertThat(read.recordBytes()).isPositive();
                assertThat(read.highWatermark()).isEqualTo(RECORDS);
                assertThat(read.preferredReadReplica()).isEqualTo(-1);
                assertThat(fetch(follower, topic, "", FETCH_BEFORE_RACK).errorCode())
                        .isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER.code());
                assertThat(fetchAt(follower, topic, RECORDS + 10).errorCode())
                        .isEqualTo(Errors.OFFSET_OUT_OF_RANGE.code());
            }

            // When: a stock consumer in rack r2 reads the partition
            TopicPartition tp = new TopicPartition(topic, 0);
            try (KafkaConsumer<String, String> consumer = consumer(cluster.bootstrapServers(), "r2")) {
                consumer.assign(List.of(tp));
                consumer.seekToBeginning(List.of(tp));
                List<String> values = new ArrayList<>();
                await().atMost(TIMEOUT).until(() -> {
                    for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                        values.add(record.value());
                    }
                    return values.size() >= RECORDS;
                });

                // Then: every record, in order, read from node 2
                assertThat(values).containsExactlyElementsOf(expected);
                assertThat(preferredReadReplica(consumer, tp)).isEqualTo(2);
            }
            for (BrokerProcess node : cluster.nodes()) {
                assertThat(node.logLinesContaining("LEAK:")).isEmpty();
            }
        }
    }

    private static List<String> produce(String bootstrap, String topic) throws Exception {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        List<String> values = new ArrayList<>();
        List<Future<RecordMetadata>> acks = new ArrayList<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props, new StringSerializer(),
                new StringSerializer())) {
            for (int i = 0; i < RECORDS; i++) {
                String value = "value-" + i;
                values.add(value);
                acks.add(producer.send(new ProducerRecord<>(topic, 0, "key-" + i, value)));
            }
            for (Future<RecordMetadata> ack : acks) {
                ack.get(60, TimeUnit.SECONDS);
            }
        }
        return values;
    }

    /** Waits until node {@code follower} has learnt a high watermark of at least {@code offset}. */
    private static void awaitFollowerHighWatermark(BrokerProcess follower, String topic, long offset) {
        await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(200)).ignoreExceptions().until(() -> {
            try (RawKafkaClient client = RawKafkaClient.connect(follower)) {
                return fetch(client, topic, "r2", FETCH_WITH_RACK).highWatermark() >= offset;
            }
        });
    }

    /** One partition's answer to a raw Fetch; the records are only counted (and released). */
    private record Answer(short errorCode, long highWatermark, int preferredReadReplica, int recordBytes) {
    }

    private static Answer fetch(RawKafkaClient client, String topic, String rack, short version) {
        return fetch(client, topic, rack, version, 0L);
    }

    private static Answer fetchAt(RawKafkaClient client, String topic, long offset) {
        return fetch(client, topic, "r2", FETCH_WITH_RACK, offset);
    }

    /** A consumer's one-partition Fetch of {@code topic} partition 0 from {@code offset}, answered at once. */
    private static Answer fetch(RawKafkaClient client, String topic, String rack, short version, long offset) {
        FetchRequestData request = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0).setMinBytes(1)
                .setMaxBytes(1024 * 1024).setIsolationLevel((byte) 0).setSessionId(0).setSessionEpoch(-1)
                .setRackId(rack)
                .setTopics(List.of(new FetchRequestData.FetchTopic().setTopic(topic)
                        .setPartitions(List.of(new FetchRequestData.FetchPartition().setPartition(0)
                                .setFetchOffset(offset).setLogStartOffset(-1).setPartitionMaxBytes(1024 * 1024)))));
        FetchResponseData response = client.sendAndReceive(request, version, Duration.ofSeconds(30));
        assertThat(response.errorCode()).isEqualTo(Errors.NONE.code());
        FetchResponseData.PartitionData partition = response.responses().get(0).partitions().get(0);
        int bytes = 0;
        if (partition.records() != null) {
            bytes = partition.records().readableBytes();
            partition.records().release();
        }
        return new Answer(partition.errorCode(), partition.highWatermark(), partition.preferredReadReplica(), bytes);
    }

    private static KafkaConsumer<String, String> consumer(String bootstrap, String rack) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.CLIENT_RACK_CONFIG, rack);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 500);
        return new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer());
    }

    /** The consumer's {@code preferred-read-replica} metric of {@code tp}: the replica it reads from, -1 the leader. */
    private static Object preferredReadReplica(KafkaConsumer<String, String> consumer, TopicPartition tp) {
        for (Map.Entry<MetricName, ? extends Metric> e : consumer.metrics().entrySet()) {
            MetricName name = e.getKey();
            if (name.name().equals("preferred-read-replica") && tp.topic().equals(name.tags().get("topic"))
                    && Integer.toString(tp.partition()).equals(name.tags().get("partition"))) {
                return e.getValue().metricValue();
            }
        }
        return null;
    }
}
