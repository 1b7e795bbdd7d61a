package io.cairn.compat.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.cairn.compat.group.GroupClients;
import io.cairn.compat.harness.KafkaHalfInFaults;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.CairnProcess;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.KafkaDistribution;
import io.cairn.testkit.KafkaReferenceProcess;
import io.cairn.testkit.TestDirectories;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeReplicaLogDirsResult.ReplicaLogDirInfo;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionReplica;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Moving a replica between a broker's two {@code log.dirs} as users do it, the same scenario against Cairn and the
 * reference Kafka: with a producer running (acks=all), the stock {@code kafka-reassign-partitions --execute} with a
 * {@code log_dirs} entry ({@code ReassignPartitionsCommand}: AlterPartitionReassignments, then AlterReplicaLogDirs)
 * moves the partition; {@code Admin.describeReplicaLogDirs} then shows it in the target directory with no future
 * replica, {@code kafka-log-dirs --describe} lists it there and not in the source; every acknowledged record is read
 * back in order, and after a restart the replica is still in the target directory with the same records. A second
 * move back with {@code Admin.alterReplicaLogDirs} does the same without the tool.
 */
@Timeout(300)
@ExtendWith(BrokerLogsExtension.class)
class AlterReplicaLogDirsIT {

    private static final String REASSIGN = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand";
    private static final String LOG_DIRS = "org.apache.kafka.tools.LogDirsCommand";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration TIMEOUT = Duration.ofSeconds(90);

    @KafkaHalfInFaults
    void aReplicaMovesBetweenLogDirsWhileAProducerRunsAndStaysThereAfterARestart(BrokerKind kind) throws Exception {
        // Given: a broker with two log.dirs and a partition with records in one of them
        Path root = TestDirectories.createTempDirectory("cairn-alter-log-dirs-");
        String first = root.resolve("first").toAbsolutePath().toString();
        String second = root.resolve("second").toAbsolutePath().toString();
        String dirs = first + "," + second;
        BrokerProcess broker = kind == BrokerKind.CAIRN ? CairnProcess.builder().config("log.dirs", dirs).build()
                : KafkaReferenceProcess.builder().config("log.dirs", dirs).build();
        try (broker; Admin admin = startAndConnect(broker)) {
            String topic = GroupClients.createTopic(broker, "alter-log-dirs", 1);
            TopicPartitionReplica replica = new TopicPartitionReplica(topic, 0, 1);
            String source = logDirOf(admin, replica).getCurrentReplicaLogDir();
            String target = source.equals(first) ? second : first;
            Map<Long, String> acked = new ConcurrentSkipListMap<>();
            try (Producing producing = Producing.start(broker, topic, acked)) {
                await().atMost(TIMEOUT).until(() -> acked.size() >= 20_000);

                // When: kafka-reassign-partitions --execute with the target directory
                Path plan = root.resolve("plan.json");
                Files.writeString(plan, "{\"version\":1,\"partitions\":[{\"topic\":\"" + topic
                        + "\",\"partition\":0,\"replicas\":[1],\"log_dirs\":[\"" + target + "\"]}]}");
                JavaTool.Result executed = KafkaDistribution.tool(REASSIGN).args("--bootstrap-server",
                        broker.bootstrapServers(), "--execute", "--reassignment-json-file", plan.toString())
                        .timeout(TIMEOUT).build().run();

                // Then
                assertThat(executed.exitCode()).as("%s", executed).isZero();
                awaitMoved(admin, replica, target);
                int ackedAtMove = acked.size();
                await().atMost(TIMEOUT).until(() -> acked.size() >= ackedAtMove + 2_000);
                producing.stopAndCheck();
            }
            assertListedOnlyIn(broker, topic, target, source);
            assertEveryAckedRecordReadInOrder(broker, topic, acked);

            // When: the broker restarts
            broker.restart();

            // Then
            try (Admin again = GroupClients.admin(broker)) {
                awaitMoved(again, replica, target);
            }
            assertEveryAckedRecordReadInOrder(broker, topic, acked);

            // When: Admin.alterReplicaLogDirs moves it back
            admin.alterReplicaLogDirs(Map.of(replica, source)).all().get(60, TimeUnit.SECONDS);

            // Then
            awaitMoved(admin, replica, source);
            assertListedOnlyIn(broker, topic, source, target);
            assertEveryAckedRecordReadInOrder(broker, topic, acked);
            assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
        } finally {
            TestDirectories.deleteRecursively(root);
        }
    }

    private static Admin startAndConnect(BrokerProcess broker) {
        broker.start();
        return GroupClients.admin(broker);
    }

    private static ReplicaLogDirInfo logDirOf(Admin admin, TopicPartitionReplica replica) throws Exception {
        return admin.describeReplicaLogDirs(List.of(replica)).all().get(30, TimeUnit.SECONDS).get(replica);
    }

    private static void awaitMoved(Admin admin, TopicPartitionReplica replica, String target) {
        await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
            ReplicaLogDirInfo info = logDirOf(admin, replica);
            assertThat(info.getCurrentReplicaLogDir()).isEqualTo(target);
            assertThat(info.getFutureReplicaLogDir()).isNull();
        });
    }

    /** {@code kafka-log-dirs --describe}: the partition is in {@code target}, not in {@code other}. */
    private static void assertListedOnlyIn(BrokerProcess broker, String topic, String target, String other)
            throws Exception {
        JavaTool.Result tool = KafkaDistribution.tool(LOG_DIRS).args("--bootstrap-server",
                broker.bootstrapServers(), "--describe", "--topic-list", topic).timeout(Duration.ofSeconds(60))
                .build().run();
        assertThat(tool.exitCode()).as("%s", tool).isZero();
        List<String> lines = tool.stdout().lines().toList();
        JsonNode json = JSON.readTree(lines.get(lines.size() - 1));
        List<String> targetPartitions = new ArrayList<>();
        List<String> otherPartitions = new ArrayList<>();
        for (JsonNode dir : json.get("brokers").get(0).get("logDirs")) {
            List<String> into = dir.get("logDir").asText().equals(target) ? targetPartitions
                    : dir.get("logDir").asText().equals(other) ? otherPartitions : new ArrayList<>();
            for (JsonNode partition : dir.get("partitions")) {
                assertThat(partition.get("isFuture").asBoolean()).as("%s", tool).isFalse();
                assertThat(partition.get("offsetLag").asLong()).as("%s", tool).isZero();
                into.add(partition.get("partition").asText());
            }
        }
        assertThat(targetPartitions).as("%s", tool).containsExactly(topic + "-0");
        assertThat(otherPartitions).as("%s", tool).isEmpty();
    }

    private static void assertEveryAckedRecordReadInOrder(BrokerProcess broker, String topic, Map<Long, String> acked) {
        TopicPartition tp = new TopicPartition(topic, 0);
        long last = ((ConcurrentSkipListMap<Long, String>) acked).lastKey();
        Map<Long, String> read = new LinkedHashMap<>();
        try (KafkaConsumer<String, String> consumer = GroupClients.consumer(broker, GroupClients.uniqueName("g"),
                Map.of())) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            await().atMost(TIMEOUT).pollInSameThread().pollDelay(Duration.ZERO).until(() -> {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    read.put(record.offset(), record.value());
                }
                return read.containsKey(last);
            });
        }
        List<Long> order = new ArrayList<>(read.keySet());
        assertThat(order).isSorted();
        acked.forEach((offset, value) -> assertThat(read.get(offset)).as("offset %d", offset).isEqualTo(value));
    }

    /** One idempotent acks=all producer sending numbered values until stopped; acknowledged offsets are recorded. */
    private static final class Producing implements AutoCloseable {

        private final KafkaProducer<String, String> producer;
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final AtomicReference<Exception> failure = new AtomicReference<>();
        private final Thread thread;

        private Producing(BrokerProcess broker, String topic, Map<Long, String> acked) {
            Properties config = new Properties();
            config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
            config.put(ProducerConfig.ACKS_CONFIG, "all");
            config.put(ProducerConfig.LINGER_MS_CONFIG, 5);
            this.producer = new KafkaProducer<>(config, new StringSerializer(), new StringSerializer());
            this.thread = new Thread(() -> {
                for (int i = 0; running.get(); i++) {
                    if (i % 10 == 0) {
                        pace();
                    }
                    String value = GroupClients.value(i) + "-" + "x".repeat(100);
                    producer.send(new ProducerRecord<>(topic, 0, null, value), (metadata, error) -> {
                        if (error != null) {
                            failure.compareAndSet(null, error);
                        } else {
                            acked.put(metadata.offset(), value);
                        }
                    });
                }
            }, "alter-log-dirs-producer");
        }

        /** Keeps the load at about 10,000 records a second, so that the logs stay small enough to read back. */
        private void pace() {
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                running.set(false);
            }
        }

        static Producing start(BrokerProcess broker, String topic, Map<Long, String> acked) {
            Producing producing = new Producing(broker, topic, acked);
            producing.thread.start();
            return producing;
        }

        void stopAndCheck() throws Exception {
            running.set(false);
            thread.join(TimeUnit.SECONDS.toMillis(60));
            producer.flush();
            assertThat(failure.get()).isNull();
        }

        @Override
        public void close() {
            running.set(false);
            producer.close(Duration.ofSeconds(30));
        }
    }
}
