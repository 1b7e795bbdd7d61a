package io.cairn.compat.admin;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.cairn.compat.group.GroupClients;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.CairnProcess;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.KafkaDistribution;
import io.cairn.testkit.KafkaReferenceProcess;
import io.cairn.testkit.TestDirectories;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeReplicaLogDirsResult.ReplicaLogDirInfo;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionReplica;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * DescribeLogDirs as users see it, the same scenario against Cairn and the reference Kafka: the stock
 * {@code kafka-log-dirs --describe [--topic-list]} ({@code org.apache.kafka.tools.LogDirsCommand}) prints Kafka's
 * JSON (broker, log dir, error, partitions with size, offset lag and future flag), and {@code Admin.describeLogDirs}
 * and {@code Admin.describeReplicaLogDirs} report the same log dir, sizes and the volume's space; a broker with two
 * {@code log.dirs} places new partitions in both and describes both.
 */
@Timeout(180)
@ExtendWith(BrokerLogsExtension.class)
class DescribeLogDirsIT {

    private static final String LOG_DIRS = "org.apache.kafka.tools.LogDirsCommand";
    private static final ObjectMapper JSON = new ObjectMapper();

    static List<BrokerKind> kinds() {
        return GroupClients.kinds().toList();
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void logDirsToolAndAdminDescribeTheBrokersLogDirectory(BrokerKind kind) throws Exception {
        // Given: records in partition 0 of a two-partition topic.
        BrokerProcess broker = kind.shared();
        String topic = GroupClients.createTopic(broker, "log-dirs", 2);
        produce(broker, topic, 20);

        // When
        JavaTool.Result tool = KafkaDistribution.tool(LOG_DIRS).args("--bootstrap-server",
                broker.bootstrapServers(), "--describe", "--topic-list", topic).timeout(Duration.ofSeconds(60))
                .build().run();

        // Then: Kafka's three lines, the last one its JSON.
        assertThat(tool.exitCode()).as("%s", tool).isZero();
        List<String> lines = tool.stdout().lines().toList();
        assertThat(lines).as("%s", tool).hasSize(3);
        assertThat(lines.get(0)).isEqualTo("Querying brokers for log directories information");
        assertThat(lines.get(1)).isEqualTo("Received log directory information from brokers 1");
        JsonNode json = JSON.readTree(lines.get(2));
        assertThat(json.get("version").asInt()).isEqualTo(1);
        assertThat(json.get("brokers")).hasSize(1);
        JsonNode brokerNode = json.get("brokers").get(0);
        assertThat(brokerNode.get("broker").asInt()).isEqualTo(1);
        assertThat(brokerNode.get("logDirs")).hasSize(1);
        JsonNode dir = brokerNode.get("logDirs").get(0);
        assertThat(dir.get("error").isNull()).as("%s", dir).isTrue();
        List<String> names = new ArrayList<>();
        for (JsonNode partition : dir.get("partitions")) {
            names.add(partition.get("partition").asText());
            assertThat(partition.get("offsetLag").asLong()).isZero();
            assertThat(partition.get("isFuture").asBoolean()).isFalse();
            assertThat(partition.fieldNames()).toIterable()
                    .containsExactlyInAnyOrder("partition", "size", "offsetLag", "isFuture");
        }
        assertThat(names).containsExactlyInAnyOrder(topic + "-0", topic + "-1");
        String logDir = dir.get("logDir").asText();

        try (Admin admin = GroupClients.admin(broker)) {
            // When
            Map<String, LogDirDescription> dirs = admin.describeLogDirs(List.of(1)).allDescriptions()
                    .get(30, TimeUnit.SECONDS).get(1);
            TopicPartitionReplica replica = new TopicPartitionReplica(topic, 0, 1);
            ReplicaLogDirInfo replicaDir = admin.describeReplicaLogDirs(List.of(replica)).all()
                    .get(30, TimeUnit.SECONDS).get(replica);

            // Then
            assertThat(dirs).containsOnlyKeys(logDir);
            LogDirDescription description = dirs.get(logDir);
            assertThat(description.error()).isNull();
            assertThat(description.totalBytes()).isPresent();
            assertThat(description.usableBytes()).isPresent();
            ReplicaInfo p0 = description.replicaInfos().get(new TopicPartition(topic, 0));
            assertThat(p0.size()).isPositive();
            assertThat(p0.offsetLag()).isZero();
            assertThat(p0.isFuture()).isFalse();
            assertThat(description.replicaInfos().get(new TopicPartition(topic, 1)).size()).isZero();
            assertThat(replicaDir.getCurrentReplicaLogDir()).isEqualTo(logDir);
            assertThat(replicaDir.getFutureReplicaLogDir()).isNull();
        }
        assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void aBrokerWithTwoLogDirsSpreadsNewPartitionsAndDescribesBoth(BrokerKind kind) throws Exception {
        // Given: two log.dirs.
        Path root = TestDirectories.createTempDirectory("cairn-log-dirs-");
        String first = root.resolve("first").toAbsolutePath().toString();
        String second = root.resolve("second").toAbsolutePath().toString();
        String dirs = first + "," + second;
        BrokerProcess broker = kind == BrokerKind.CAIRN ? CairnProcess.builder().config("log.dirs", dirs).build()
                : KafkaReferenceProcess.builder().config("log.dirs", dirs).build();
        try (broker) {
            broker.start();
            String topic = GroupClients.createTopic(broker, "two-dirs", 4);
            try (Admin admin = GroupClients.admin(broker)) {
                // When
                Map<String, LogDirDescription> described = admin.describeLogDirs(List.of(1)).allDescriptions()
                        .get(30, TimeUnit.SECONDS).get(1);

                // Then: each directory holds some of the partitions, and together all of them.
                assertThat(described).containsOnlyKeys(first, second);
                List<TopicPartition> all = new ArrayList<>();
                for (LogDirDescription d : described.values()) {
                    assertThat(d.error()).isNull();
                    List<TopicPartition> here = d.replicaInfos().keySet().stream()
                            .filter(tp -> tp.topic().equals(topic)).toList();
                    assertThat(here).isNotEmpty();
                    all.addAll(here);
                }
                assertThat(all).extracting(TopicPartition::partition).containsExactlyInAnyOrder(0, 1, 2, 3);
            }
        } finally {
            TestDirectories.deleteRecursively(root);
        }
    }

    private static void produce(BrokerProcess broker, String topic, int count) throws Exception {
        Properties config = new Properties();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(config, new StringSerializer(),
                new StringSerializer())) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(topic, 0, "k" + i, "value " + i)).get(30, TimeUnit.SECONDS);
            }
        }
    }
}
