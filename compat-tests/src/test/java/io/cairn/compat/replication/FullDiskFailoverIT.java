package io.cairn.compat.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.SizedTmpfs;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * One node of three runs out of disk (its data directory moved onto a 48 MiB tmpfs, {@link SizedTmpfs}) while an
 * idempotent acks=all producer writes to a replication-factor-3 topic with {@code min.insync.replicas=2}: the node
 * halts with exit code 1 after one line naming the failed directory, the two others go on taking acks=all writes
 * without the producer seeing an error, and once space is freed the node starts again and rejoins every ISR. Every
 * acknowledged record is then read back at its offset, in order, none twice. One cluster per kind.
 */
@Timeout(420)
@ExtendWith(BrokerLogsExtension.class)
@Tag("faults")
class FullDiskFailoverIT {

    private static final int PARTITIONS = 3;
    private static final int DISK_MIB = 48;
    private static final int VALUE_BYTES = 1024;
    private static final int RECORDS_AFTER_HALT = 5_000;
    private static final Duration HALT_TIMEOUT = Duration.ofSeconds(120);

    static Stream<BrokerKind> kinds() {
        return ReplicationClients.kinds();
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void aNodeWhoseDiskFillsStopsTheOthersGoOnAndItRejoinsOnceSpaceIsFreed(BrokerKind kind) throws Exception {
        Map<String, String> config = new HashMap<>(ReplicationClients.clusterConfig());
        config.put("min.insync.replicas", "2");
        try (BrokerCluster cluster = BrokerCluster.create(kind, ReplicationClients.NODES, config);
             Admin admin = ReplicationClients.startAndConnect(cluster)) {
            // Given: an RF-3 topic, and a node that is not the active controller moved onto a small disk
            String topic = ReplicationClients.uniqueName("full-disk");
            ReplicationClients.createTopic(admin, topic, PARTITIONS, 2);
            int controller = cluster.activeControllerId(Duration.ofSeconds(60));
            BrokerProcess node = cluster.node(controller == 3 ? 2 : 3);
            node.stop();
            SizedTmpfs disk;
            try {
                disk = SizedTmpfs.mount(node.dataDir(), DISK_MIB);
            } catch (SizedTmpfs.Unavailable e) {
                assumeTrue(false, e.getMessage());
                return;
            }
            try (disk) {
                node.commandPrefix(disk.enterCommand());
                cluster.startNode(node);
                ReplicationClients.awaitFullIsr(admin, List.of(topic));
                Map<TopicPartition, Map<Long, String>> acked = new ConcurrentHashMap<>();

                // When: the producer writes until the node stops, and goes on after
                try (Producing producing = new Producing(cluster, topic, acked)) {
                    await().atMost(HALT_TIMEOUT).until(() -> !node.isRunning());
                    int atHalt = count(acked);
                    await().atMost(HALT_TIMEOUT).until(() -> count(acked) >= atHalt + RECORDS_AFTER_HALT);
                    producing.stopAndCheck();
                }

                // Then: it halted for its disk ("Shutdown broker because all log dirs in ... have failed", or the
                // metadata log dir when the Raft log's write failed first), with exit code 1
                assertThat(node.exitCode()).isEqualTo(OptionalInt.of(1));
                assertThat(node.logLinesContaining("Shutdown broker because ")).singleElement().asString()
                        .contains(node.dataDir().toString());

                // When: space is freed and it starts again
                disk.resize(8 * DISK_MIB);
                cluster.startNode(node);

                // Then: it rejoins every ISR, and every acknowledged record is read back
                ReplicationClients.awaitFullIsr(admin, List.of(topic));
                assertEveryAckedRecordReadOnceInOrder(cluster, acked);
            }
        }
    }

    private static int count(Map<TopicPartition, Map<Long, String>> acked) {
        return acked.values().stream().mapToInt(Map::size).sum();
    }

    private static void assertEveryAckedRecordReadOnceInOrder(BrokerCluster cluster,
                                                               Map<TopicPartition, Map<Long, String>> acked) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10_000);
        Map<TopicPartition, Map<Long, String>> read = new HashMap<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new StringDeserializer())) {
            List<TopicPartition> partitions = new ArrayList<>(acked.keySet());
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, Duration.ofSeconds(30));
            partitions.forEach(tp -> read.put(tp, new ConcurrentSkipListMap<>()));
            await().atMost(Duration.ofSeconds(120)).pollInSameThread().pollDelay(Duration.ZERO).until(() -> {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    TopicPartition tp = new TopicPartition(record.topic(), record.partition());
                    Map<Long, String> byOffset = read.get(tp);
                    assertThat(byOffset.isEmpty() || record.offset() > ((ConcurrentSkipListMap<Long, String>) byOffset)
                            .lastKey()).as("%s offset %d in order", tp, record.offset()).isTrue();
                    byOffset.put(record.offset(), record.value());
                }
                return partitions.stream().allMatch(tp -> consumer.position(tp) >= ends.get(tp));
            });
        }
        Set<String> values = new HashSet<>();
        read.values().forEach(byOffset -> byOffset.values().forEach(value -> assertThat(values.add(value))
                .as("value read twice: %s", value.substring(0, 16)).isTrue()));
        acked.forEach((tp, byOffset) -> byOffset.forEach((offset, value) -> assertThat(read.get(tp).get(offset))
                .as("%s offset %d", tp, offset).isEqualTo(value)));
    }

    /** An idempotent acks=all producer writing numbered 1 KiB values round the partitions until stopped. */
    private static final class Producing implements AutoCloseable {

        private final KafkaProducer<String, String> producer;
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final AtomicReference<Exception> failure = new AtomicReference<>();
        private final Thread thread;

        Producing(BrokerCluster cluster, String topic, Map<TopicPartition, Map<Long, String>> acked) {
            Properties props = new Properties();
            props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
            props.put(ProducerConfig.ACKS_CONFIG, "all");
            props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
            this.producer = new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
            for (int p = 0; p < PARTITIONS; p++) {
                acked.put(new TopicPartition(topic, p), new ConcurrentSkipListMap<>());
            }
            this.thread = new Thread(() -> {
                for (int i = 0; running.get(); i++) {
                    String head = String.format("record-%09d-", i);
                    String value = head + "x".repeat(VALUE_BYTES - head.length());
                    TopicPartition tp = new TopicPartition(topic, i % PARTITIONS);
                    producer.send(new ProducerRecord<>(topic, tp.partition(), null, value), (metadata, error) -> {
                        if (error != null) {
                            failure.compareAndSet(null, error);
                        } else {
                            acked.get(tp).put(metadata.offset(), value);
                        }
                    });
                }
            }, "full-disk-producer");
            thread.start();
        }

        void stopAndCheck() throws Exception {
            running.set(false);
            thread.join(TimeUnit.SECONDS.toMillis(60));
            producer.flush();
            assertThat(failure.get()).as("a send failed").isNull();
        }

        @Override
        public void close() {
            running.set(false);
            producer.close(Duration.ofSeconds(30));
        }
    }
}
