package io.cairn.compat.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.compat.group.GroupClients;
import io.cairn.compat.harness.KafkaHalfInFaults;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.KafkaDistribution;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Kafka's stock consumer-group tools, each run as a user runs it ({@code --bootstrap-server}; the console consumer and
 * the perf test in their own JVM, {@code kafka-consumer-groups} in the test JVM as {@link KafkaDistribution#tool}
 * runs it), with the same scenario against Cairn and the reference Kafka: {@code kafka-console-consumer --group}
 * resumes where its last run committed, {@code kafka-consumer-groups}
 * ({@code org.apache.kafka.tools.consumer.group.ConsumerGroupCommand}) lists, describes (offsets and lag, members,
 * state), resets, deletes offsets of and deletes a group, and {@code kafka-consumer-perf-test}
 * ({@code org.apache.kafka.tools.ConsumerPerformance}) reads a topic as a group.
 *
 * <p>The tables the group tool prints are compared column by column (split on whitespace), as its column widths
 * follow the longest value.
 */
@Timeout(180)
@ExtendWith(BrokerLogsExtension.class)
class ConsumerGroupsCliIT {

    private static final String CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer";
    private static final String GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand";
    private static final String PERF = "org.apache.kafka.tools.ConsumerPerformance";
    private static final Duration TOOL_TIMEOUT = Duration.ofSeconds(60);

    @KafkaHalfInFaults
    void consoleConsumerInAGroupContinuesWhereItsLastRunCommittedAndDescribeShowsTheLag(BrokerKind kind) {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = GroupClients.createTopic(broker, "cli-group", 1);
        String group = GroupClients.uniqueName("cli-group");
        GroupClients.produce(broker, topic, 1, 10);

        // When
        JavaTool.Result first = consume(broker, topic, group, 4);
        JavaTool.Result second = consume(broker, topic, group, 3);
        JavaTool.Result list = groups(broker, "--list");
        JavaTool.Result describe = groups(broker, "--describe", "--group", group);
        JavaTool.Result listStates = groups(broker, "--list", "--state");
        JavaTool.Result listTypes = groups(broker, "--list", "--type");

        // Then
        assertThat(rows(listStates, group)).as("%s", listStates).containsExactly(List.of(group, "Empty"));
        assertThat(rows(listTypes, group)).as("%s", listTypes).containsExactly(List.of(group, "Classic"));
        assertThat(first.stdout().lines().toList()).as("%s", first).containsExactly(
                GroupClients.value(0), GroupClients.value(1), GroupClients.value(2), GroupClients.value(3));
        assertThat(second.stdout().lines().toList()).as("%s", second).containsExactly(
                GroupClients.value(4), GroupClients.value(5), GroupClients.value(6));
        assertThat(list.stdout().lines().toList()).as("%s", list).contains(group);
        assertThat(rows(describe, group)).as("%s", describe)
                .containsExactly(List.of(group, topic, "0", "7", "10", "3", "-", "-", "-"));
        assertThat(header(describe)).as("%s", describe).containsExactly("GROUP", "TOPIC", "PARTITION",
                "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID");
        for (JavaTool.Result result : List.of(first, second, list, describe, listStates, listTypes)) {
            assertThat(result.exitCode()).as("%s", result).isZero();
        }
        noLeaks(broker);
    }

    @KafkaHalfInFaults
    void consumerGroupsDescribesTheMembersAndStateAndResetsDeletesOffsetsAndDeletesTheGroup(BrokerKind kind) {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = GroupClients.createTopic(broker, "cli-admin", 1);
        String group = GroupClients.uniqueName("cli-admin");
        GroupClients.produce(broker, topic, 1, 10);
        String memberId;
        try (KafkaConsumer<String, String> member = GroupClients.consumer(broker, group,
                Map.of(ConsumerConfig.CLIENT_ID_CONFIG, "cli-member"))) {
            member.subscribe(List.of(topic));
            GroupClients.pollUntil(List.of(member), () -> assertThat(member.assignment()).hasSize(1));
            member.commitSync(Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(5)));
            memberId = member.groupMetadata().memberId();

            // When
            JavaTool.Result describe = groups(broker, "--describe", "--group", group);
            JavaTool.Result members = groups(broker, "--describe", "--group", group, "--members");
            JavaTool.Result state = groups(broker, "--describe", "--group", group, "--state");
            JavaTool.Result deleteActive = groups(broker, "--delete", "--group", group);

            // Then
            assertThat(rows(describe, group)).as("%s", describe).containsExactly(
                    List.of(group, topic, "0", "5", "10", "5", memberId, "/127.0.0.1", "cli-member"));
            assertThat(rows(members, group)).as("%s", members)
                    .containsExactly(List.of(group, memberId, "/127.0.0.1", "cli-member", "1"));
            assertThat(rows(state, group)).as("%s", state).containsExactly(
                    List.of(group, broker.host() + ":" + broker.port(), "(1)", "range", "Stable", "1"));
            assertThat(deleteActive.stdout() + deleteActive.stderr()).as("%s", deleteActive)
                    .contains("Group '" + group + "' could not be deleted due to: "
                            + "org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty.");
        }

        // When: the member left
        JavaTool.Result reset = groups(broker, "--reset-offsets", "--to-earliest", "--execute", "--group", group,
                "--topic", topic);
        JavaTool.Result afterReset = groups(broker, "--describe", "--group", group);
        JavaTool.Result deleteOffsets = groups(broker, "--delete-offsets", "--group", group, "--topic", topic);
        JavaTool.Result afterDeleteOffsets = groups(broker, "--describe", "--group", group);
        JavaTool.Result delete = groups(broker, "--delete", "--group", group);
        JavaTool.Result list = groups(broker, "--list");
        JavaTool.Result describeDeleted = groups(broker, "--describe", "--group", group);

        // Then
        assertThat(describeDeleted.stdout() + describeDeleted.stderr()).as("%s", describeDeleted)
                .contains("Error: Executing consumer group command failed due to "
                        + "org.apache.kafka.common.errors.GroupIdNotFoundException: Group " + group + " not found.");
        assertThat(rows(reset, group)).as("%s", reset).containsExactly(List.of(group, topic, "0", "0"));
        assertThat(rows(afterReset, group)).as("%s", afterReset)
                .containsExactly(List.of(group, topic, "0", "0", "10", "10", "-", "-", "-"));
        assertThat(deleteOffsets.stdout()).as("%s", deleteOffsets)
                .contains("Request succeeded for deleting offsets from group " + group + ".");
        assertThat(rows(deleteOffsets, topic)).as("%s", deleteOffsets)
                .containsExactly(List.of(topic, "0", "Successful"));
        assertThat(rows(afterDeleteOffsets, group)).as("%s", afterDeleteOffsets).isEmpty();
        assertThat(delete.stdout()).as("%s", delete)
                .contains("Deletion of requested consumer groups ('" + group + "') was successful.");
        assertThat(list.stdout().lines().toList()).as("%s", list).doesNotContain(group);
        for (JavaTool.Result result : List.of(reset, afterReset, deleteOffsets, afterDeleteOffsets, delete, list)) {
            assertThat(result.exitCode()).as("%s", result).isZero();
        }
        noLeaks(broker);
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.group.GroupClients#kinds")
    void consumerPerfTestReadsFiftyThousandRecordsAsAGroupAndPrintsItsStats(BrokerKind kind) {
        // Given
        BrokerProcess broker = kind.shared();
        int records = 50_000;
        String topic = GroupClients.createTopic(broker, "cli-perf", 3);
        GroupClients.produce(broker, topic, 3, records);

        // When
        JavaTool.Result perf = KafkaDistribution.tool(PERF).args("--bootstrap-server", broker.bootstrapServers(),
                "--topic", topic, "--messages", Integer.toString(records), "--timeout", "30000")
                .timeout(TOOL_TIMEOUT).build().run();

        // Then
        assertThat(perf.exitCode()).as("%s", perf).isZero();
        List<String> lines = perf.stdout().lines().toList();
        assertThat(lines).as("%s", perf).contains("start.time, end.time, data.consumed.in.MB, MB.sec, "
                + "data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec");
        List<String> stats = Arrays.asList(lines.get(lines.size() - 1).split(", "));
        assertThat(stats).as("%s", perf).hasSize(10);
        assertThat(stats.get(4)).as("data.consumed.in.nMsg of %s", perf).isEqualTo(Integer.toString(records));
        assertThat(perf.stderr()).as("%s", perf).doesNotContain("Exception", "WARNING: Exiting before consuming");
        noLeaks(broker);
    }

    private static JavaTool.Result consume(BrokerProcess broker, String topic, String group, int messages) {
        return tool(CONSUMER, "--bootstrap-server", broker.bootstrapServers(), "--topic", topic, "--group", group,
                "--from-beginning", "--max-messages", Integer.toString(messages), "--timeout-ms", "30000");
    }

    private static JavaTool.Result groups(BrokerProcess broker, String... args) {
        String[] all = new String[args.length + 2];
        all[0] = "--bootstrap-server";
        all[1] = broker.bootstrapServers();
        System.arraycopy(args, 0, all, 2, args.length);
        return tool(GROUPS, all);
    }

    private static JavaTool.Result tool(String mainClass, String... args) {
        return KafkaDistribution.tool(mainClass).args(args).timeout(TOOL_TIMEOUT).build().run();
    }

    /** The rows of a table the tool printed whose first column is {@code first}, split into columns. */
    private static List<List<String>> rows(JavaTool.Result result, String first) {
        return result.stdout().lines().map(String::strip).map(line -> List.of(line.split("\\s+")))
                .filter(columns -> columns.get(0).equals(first)).toList();
    }

    /** The column names of the table the tool printed (the line starting with {@code GROUP}). */
    private static List<String> header(JavaTool.Result result) {
        return rows(result, "GROUP").stream().findFirst().orElse(List.of());
    }

    private static void noLeaks(BrokerProcess broker) {
        assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
    }
}
