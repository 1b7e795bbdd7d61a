package io.cairn.compat.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.compat.harness.KafkaHalfInFaults;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.KafkaDistribution;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Kafka's stock {@code kafka-topics} tool ({@code org.apache.kafka.tools.TopicCommand}), run as a user runs it, with
 * the same scenario against Cairn and the reference Kafka: create (with a config override), the errors of a second
 * create, an unknown config and an impossible replication factor, list, describe (which uses
 * DescribeTopicPartitions and DescribeConfigs in 4.x), delete, and delete of a topic that is gone.
 */
@Timeout(300)
@ExtendWith(BrokerLogsExtension.class)
class KafkaTopicsCommandIT {

    private static final String TOOL = "org.apache.kafka.tools.TopicCommand";

    @ParameterizedTest
    @EnumSource(BrokerKind.class)
    void kafkaTopicsCreatesListsDescribesAndDeletesATopic(BrokerKind kind) {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = "cli-topic-" + UUID.randomUUID().toString().substring(0, 8);

        // When
        JavaTool.Result created = run(broker, "--create", "--topic", topic, "--partitions", "3",
                "--replication-factor", "1", "--config", "retention.ms=1000");
        JavaTool.Result again = run(broker, "--create", "--topic", topic);
        JavaTool.Result listed = run(broker, "--list");
        JavaTool.Result described = run(broker, "--describe", "--topic", topic);

        // Then
        assertThat(created.exitCode()).as("%s", created).isZero();
        assertThat(created.stdout()).as("%s", created).contains("Created topic " + topic + ".");
        assertThat(again.exitCode()).as("%s", again).isEqualTo(1);
        assertThat(again.stdout() + again.stderr()).contains("Topic '" + topic + "' already exists.");
        assertThat(listed.exitCode()).as("%s", listed).isZero();
        assertThat(listed.stdout().lines().toList()).as("%s", listed).contains(topic);
        assertThat(described.exitCode()).as("%s", described).isZero();
        List<String> lines = described.stdout().lines().toList();
        assertThat(lines).as("%s", described).hasSize(4);
        // The reference Kafka also lists min.insync.replicas=1, a static broker setting of its test config.
        assertThat(lines.get(0)).matches("Topic: " + topic + "\tTopicId: [A-Za-z0-9_-]{22}\tPartitionCount: 3\t"
                + "ReplicationFactor: 1\tConfigs: (min.insync.replicas=1,)?retention.ms=1000");
        List<String> partitions = new ArrayList<>();
        for (int p = 0; p < 3; p++) {
            partitions.add("\tTopic: " + topic + "\tPartition: " + p + "\tLeader: 1\tReplicas: 1\tIsr: 1\tElr: \t"
                    + "LastKnownElr: ");
        }
        assertThat(lines.subList(1, 4)).isEqualTo(partitions);
        noLeaks(broker);
    }

    @ParameterizedTest
    @EnumSource(BrokerKind.class)
    void kafkaTopicsAddsPartitionsAndRefusesToRemoveThem(BrokerKind kind) {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = "cli-alter-" + UUID.randomUUID().toString().substring(0, 8);
        JavaTool.Result created = run(broker, "--create", "--topic", topic, "--partitions", "2");
        assertThat(created.exitCode()).as("%s", created).isZero();

        // When
        JavaTool.Result altered = run(broker, "--alter", "--topic", topic, "--partitions", "5");
        JavaTool.Result shrunk = run(broker, "--alter", "--topic", topic, "--partitions", "3");

        // Then
        assertThat(altered.exitCode()).as("%s", altered).isZero();
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(run(broker, "--describe", "--topic",
                topic).stdout().lines().toList()).first().asString().contains("PartitionCount: 5"));
        assertThat(shrunk.exitCode()).as("%s", shrunk).isEqualTo(1);
        assertThat(shrunk.stdout()).as("%s", shrunk).contains("Error while executing topic command : The topic "
                + topic + " currently has 5 partition(s); 3 would not be an increase.");
        noLeaks(broker);
    }

    @ParameterizedTest
    @EnumSource(BrokerKind.class)
    void kafkaTopicsReportsInvalidCreationsWithKafkasMessages(BrokerKind kind) {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = "cli-bad-" + UUID.randomUUID().toString().substring(0, 8);

        // When
        JavaTool.Result unknownConfig = run(broker, "--create", "--topic", topic, "--config", "no.such.config=1");
        JavaTool.Result badValue = run(broker, "--create", "--topic", topic, "--config", "retention.ms=abc");
        JavaTool.Result tooManyReplicas = run(broker, "--create", "--topic", topic, "--replication-factor", "3");
        JavaTool.Result listed = run(broker, "--list");

        // Then
        assertThat(unknownConfig.exitCode()).as("%s", unknownConfig).isEqualTo(1);
        assertThat(unknownConfig.stdout()).as("%s", unknownConfig)
                .contains("Error while executing topic command : Unknown topic config name: no.such.config");
        assertThat(badValue.exitCode()).as("%s", badValue).isEqualTo(1);
        assertThat(badValue.stdout()).as("%s", badValue).contains("Error while executing topic command : Invalid "
                + "value abc for configuration retention.ms: Not a number of type LONG");
        assertThat(tooManyReplicas.exitCode()).as("%s", tooManyReplicas).isEqualTo(1);
        assertThat(tooManyReplicas.stdout()).as("%s", tooManyReplicas).contains("Error while executing topic "
                + "command : Unable to replicate the partition 3 time(s): The target replication factor of 3 cannot "
                + "be reached because only 1 broker(s) are registered.");
        assertThat(listed.stdout().lines().toList()).as("%s", listed).doesNotContain(topic);
        noLeaks(broker);
    }

    @KafkaHalfInFaults
    void kafkaTopicsDeletesATopicAndThenReportsItMissing(BrokerKind kind) {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = "cli-delete-" + UUID.randomUUID().toString().substring(0, 8);
        JavaTool.Result created = run(broker, "--create", "--topic", topic, "--partitions", "2");
        assertThat(created.exitCode()).as("%s", created).isZero();

        // When
        JavaTool.Result deleted = run(broker, "--delete", "--topic", topic);

        // Then
        assertThat(deleted.exitCode()).as("%s", deleted).isZero();
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() ->
                assertThat(run(broker, "--list").stdout().lines().toList()).doesNotContain(topic));
        JavaTool.Result again = run(broker, "--delete", "--topic", topic);
        assertThat(again.exitCode()).as("%s", again).isEqualTo(1);
        assertThat(again.stdout()).as("%s", again)
                .contains("Error while executing topic command : Topic '" + topic + "' does not exist as expected");
        JavaTool.Result describeGone = run(broker, "--describe", "--topic", topic);
        assertThat(describeGone.exitCode()).as("%s", describeGone).isEqualTo(1);
        assertThat(describeGone.stdout()).as("%s", describeGone)
                .contains("Topic '" + topic + "' does not exist as expected");
        noLeaks(broker);
    }

    private static JavaTool.Result run(BrokerProcess broker, String... args) {
        List<String> all = new ArrayList<>(List.of("--bootstrap-server", broker.bootstrapServers()));
        all.addAll(List.of(args));
        return KafkaDistribution.tool(TOOL).args(all).timeout(Duration.ofSeconds(90)).build().run();
    }

    private static void noLeaks(BrokerProcess broker) {
        assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
    }
}
