package io.cairn.compat.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.compat.group.GroupClients;
import io.cairn.compat.harness.KafkaHalfInFaults;
import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.KafkaDistribution;
import io.cairn.testkit.TestDirectories;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.OffsetOutOfRangeException;
import org.apache.kafka.common.errors.PolicyViolationException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * DeleteRecords as users drive it, the same scenario against Cairn and the reference Kafka: the stock
 * {@code kafka-delete-records --offset-json-file} ({@code org.apache.kafka.tools.DeleteRecordsCommand}) and
 * {@code Admin.deleteRecords} move the log start offset (-1: the high watermark), an offset beyond the high
 * watermark and a compacted topic are refused, a consumer from earliest starts at the new start offset, and
 * {@code kafka-get-offsets} ({@code org.apache.kafka.tools.GetOffsetShell}) prints the same offsets for earliest,
 * latest, max-timestamp, earliest-local (-4) and a timestamp; on three replicas the answer's low watermark is the
 * followers' new log start offset, which they take from the leader's fetch responses.
 */
@Timeout(180)
@ExtendWith(BrokerLogsExtension.class)
class DeleteRecordsIT {

    private static final String DELETE_RECORDS = "org.apache.kafka.tools.DeleteRecordsCommand";
    private static final String GET_OFFSETS = "org.apache.kafka.tools.GetOffsetShell";
    private static final Duration TOOL_TIMEOUT = Duration.ofSeconds(60);

    static List<BrokerKind> kinds() {
        return GroupClients.kinds().toList();
    }

    @KafkaHalfInFaults
    void deleteRecordsToolAndAdminMoveTheLogStartOffsetThatConsumersAndGetOffsetsSee(BrokerKind kind)
            throws Exception {
        // Given: ten records in partition 0 and five in partition 1, timestamps rising from base + 1 s.
        BrokerProcess broker = kind.shared();
        String topic = GroupClients.createTopic(broker, "delete-records", 2);
        long base = Instant.now().minusSeconds(120).toEpochMilli();
        List<ProducerRecord<String, String>> records = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            records.add(new ProducerRecord<>(topic, 0, base + 1000L * (i + 1), "k" + i, "v" + i));
        }
        for (int i = 0; i < 5; i++) {
            records.add(new ProducerRecord<>(topic, 1, base + 1000L * (i + 1), "k" + i, "v" + i));
        }
        produce(broker, records);

        // When: the tool deletes partition 0 before offset 4 and partition 1 up to its high watermark.
        JavaTool.Result deleted = deleteWithTool(broker, """
                {"version": 1, "partitions": [
                  {"topic": "%s", "partition": 0, "offset": 4},
                  {"topic": "%s", "partition": 1, "offset": -1}]}
                """.formatted(topic, topic));

        // Then
        assertThat(deleted.exitCode()).as("%s", deleted).isZero();
        assertThat(deleted.stdout().lines().toList()).as("%s", deleted)
                .startsWith("Executing records delete operation", "Records delete operation completed:")
                .containsExactlyInAnyOrder("Executing records delete operation", "Records delete operation completed:",
                        "partition: " + topic + "-0\tlow_watermark: 4", "partition: " + topic + "-1\tlow_watermark: 5");

        TopicPartition p0 = new TopicPartition(topic, 0);
        try (Admin admin = GroupClients.admin(broker)) {
            // When: the admin client moves partition 0 on to 6, then tries beyond the high watermark.
            long low = admin.deleteRecords(Map.of(p0, RecordsToDelete.beforeOffset(6))).lowWatermarks().get(p0)
                    .get(30, TimeUnit.SECONDS).lowWatermark();
            Throwable beyond = failure(admin, p0, 11);

            // Then
            assertThat(low).isEqualTo(6);
            assertThat(beyond).isInstanceOf(OffsetOutOfRangeException.class);
        }
        assertThat(firstOffsetFromEarliest(broker, p0)).isEqualTo(6);
        assertThat(getOffsets(broker, topic, "earliest")).containsExactly(topic + ":0:6", topic + ":1:5");
        assertThat(getOffsets(broker, topic, "-4")).containsExactly(topic + ":0:6", topic + ":1:5");
        assertThat(getOffsets(broker, topic, "latest")).containsExactly(topic + ":0:10", topic + ":1:5");
        assertThat(getOffsets(broker, topic, "max-timestamp")).containsExactly(topic + ":0:9", topic + ":1:4");
        assertThat(getOffsets(broker, topic, Long.toString(base))).containsExactly(topic + ":0:6");
        assertThat(getOffsets(broker, topic, Long.toString(base + 8000))).containsExactly(topic + ":0:7");
        assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
    }

    @KafkaHalfInFaults
    void theAnswerWaitsUntilEveryFollowerMovedItsLogStartOffset(BrokerKind kind) throws Exception {
        // Given: three replicas in sync with ten records.
        try (BrokerCluster cluster = BrokerCluster.create(kind, 3, Map.of())) {
            cluster.start();
            String topic = GroupClients.uniqueName("delete-replicated");
            TopicPartition p0 = new TopicPartition(topic, 0);
            Properties props = new Properties();
            props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
            try (Admin admin = Admin.create(props)) {
                admin.createTopics(List.of(new NewTopic(topic, 1, (short) 3))).all().get(30, TimeUnit.SECONDS);
                List<ProducerRecord<String, String>> records = new ArrayList<>();
                for (int i = 0; i < 10; i++) {
                    records.add(new ProducerRecord<>(topic, 0, "k" + i, "v" + i));
                }
                produce(cluster.bootstrapServers(), records);

                // When
                long low = admin.deleteRecords(Map.of(p0, RecordsToDelete.beforeOffset(7))).lowWatermarks().get(p0)
                        .get(60, TimeUnit.SECONDS).lowWatermark();

                // Then: the low watermark is the smallest log start offset of the three replicas.
                assertThat(low).isEqualTo(7);
                assertThat(admin.listOffsets(Map.of(p0, OffsetSpec.earliest())).partitionResult(p0)
                        .get(30, TimeUnit.SECONDS).offset()).isEqualTo(7);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void aCompactedTopicRefusesDeleteRecordsWithPolicyViolation(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = GroupClients.uniqueName("delete-compacted");
        TopicPartition p0 = new TopicPartition(topic, 0);
        try (Admin admin = GroupClients.admin(broker)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1)
                    .configs(Map.of("cleanup.policy", "compact")))).all().get(30, TimeUnit.SECONDS);
            produce(broker, List.of(new ProducerRecord<>(topic, 0, "k", "v")));

            // When
            Throwable refused = failure(admin, p0, 1);

            // Then
            assertThat(refused).isInstanceOf(PolicyViolationException.class);
        }
    }

    private static Throwable failure(Admin admin, TopicPartition tp, long offset) throws Exception {
        try {
            admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(offset))).lowWatermarks().get(tp)
                    .get(30, TimeUnit.SECONDS);
            throw new AssertionError("deleteRecords to " + offset + " of " + tp + " succeeded");
        } catch (ExecutionException e) {
            return e.getCause();
        }
    }

    private static JavaTool.Result deleteWithTool(BrokerProcess broker, String json) {
        Path dir = TestDirectories.createTempDirectory("cairn-delete-records-");
        try {
            Path file = Files.writeString(dir.resolve("offsets.json"), json);
            return KafkaDistribution.tool(DELETE_RECORDS).args("--bootstrap-server", broker.bootstrapServers(),
                    "--offset-json-file", file.toString()).timeout(TOOL_TIMEOUT).build().run();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            TestDirectories.deleteRecursively(dir);
        }
    }

    private static List<String> getOffsets(BrokerProcess broker, String topic, String time) {
        JavaTool.Result result = KafkaDistribution.tool(GET_OFFSETS).args("--bootstrap-server",
                broker.bootstrapServers(), "--topic", topic, "--time", time).timeout(TOOL_TIMEOUT).build().run();
        assertThat(result.exitCode()).as("%s", result).isZero();
        return result.stdout().lines().toList();
    }

    private static long firstOffsetFromEarliest(BrokerProcess broker, TopicPartition tp) {
        Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config, new StringDeserializer(),
                new StringDeserializer())) {
            consumer.assign(List.of(tp));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                    return record.offset();
                }
            }
        }
        throw new AssertionError("no record from earliest of " + tp);
    }

    private static void produce(BrokerProcess broker, List<ProducerRecord<String, String>> records) {
        produce(broker.bootstrapServers(), records);
    }

    private static void produce(String bootstrap, List<ProducerRecord<String, String>> records) {
        Properties config = new Properties();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "30000");
        config.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "20000");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(config, new StringSerializer(),
                new StringSerializer())) {
            for (ProducerRecord<String, String> record : records) {
                producer.send(record).get(30, TimeUnit.SECONDS);
            }
        } catch (Exception e) {
            throw new AssertionError("Could not produce to " + bootstrap + ": " + e, e);
        }
    }
}
