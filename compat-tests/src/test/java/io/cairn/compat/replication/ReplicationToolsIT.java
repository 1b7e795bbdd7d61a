package io.cairn.compat.replication;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.compat.harness.KafkaHalfInFaults;
import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.KafkaDistribution;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.Node;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Kafka's stock {@code kafka-topics} ({@code TopicCommand}) on a replicated topic of a 3-node cluster: {@code
 * --describe} prints each partition's Leader, Replicas and Isr as Admin reports them; {@code --describe
 * --under-replicated-partitions} prints nothing while every ISR is full, every partition once one follower is
 * stopped, and nothing again once it is back and caught up.
 */
@Timeout(600)
@ExtendWith(BrokerLogsExtension.class)
class ReplicationToolsIT {

    private static final String TOOL = "org.apache.kafka.tools.TopicCommand";
    private static final int PARTITIONS = 3;
    /** One partition line of {@code --describe}: tab-separated {@code Name: value} fields. */
    private static final Pattern PARTITION_LINE = Pattern.compile("Partition: (\\d+)\\s+Leader: (-?\\d+|none)\\s+"
            + "Replicas: ([\\d,]*)\\s+Isr: ([\\d,]*)");

    @KafkaHalfInFaults
    void describeShowsLeaderReplicasIsrAndUnderReplicatedPartitionsFollowAStoppedFollower(BrokerKind kind)
            throws Exception {
        // Given
        try (BrokerCluster cluster = BrokerCluster.create(kind, ReplicationClients.NODES,
                ReplicationClients.clusterConfig()); Admin admin = ReplicationClients.startAndConnect(cluster)) {
            String topic = ReplicationClients.uniqueName("tools");
            ReplicationClients.createTopic(admin, topic, PARTITIONS, 2);

            // When / Then: --describe is what Admin says
            List<PartitionLine> described = describe(cluster, "--topic", topic);
            assertThat(described).hasSize(PARTITIONS);
            for (PartitionLine line : described) {
                var partition = ReplicationClients.partitions(admin, topic).get(line.partition());
                assertThat(line.leader()).as("%s", line).isEqualTo(partition.leader().id());
                assertThat(line.replicas()).as("%s", line).containsExactlyElementsOf(ids(partition.replicas()))
                        .hasSize(3).contains(line.leader());
                assertThat(line.isr()).as("%s", line).containsExactlyInAnyOrderElementsOf(line.replicas());
            }
            assertThat(describe(cluster, "--topic", topic, "--under-replicated-partitions"))
                    .as("under-replicated partitions with every ISR full").isEmpty();

            // When: a follower of partition 0 stops (every node holds a replica of every partition)
            int follower = described.get(0).replicas().stream().filter(id -> id != described.get(0).leader())
                    .findFirst().orElseThrow();
            cluster.node(follower).stop();
            ReplicationClients.awaitPartitions(admin, List.of(topic), "node " + follower + " out of the ISR",
                    partition -> partition.leader() != null && !partition.leader().isEmpty()
                            && partition.isr().stream().noneMatch(node -> node.id() == follower));

            // Then
            List<PartitionLine> under = describe(cluster, "--topic", topic, "--under-replicated-partitions");
            assertThat(under).extracting(PartitionLine::partition).as("under-replicated with node %d down", follower)
                    .containsExactlyInAnyOrder(0, 1, 2);
            assertThat(under).allSatisfy(line -> assertThat(line.isr()).hasSize(2).doesNotContain(follower));
            assertThat(describe(cluster, "--topic", topic, "--unavailable-partitions")).isEmpty();

            // When: it is back and caught up
            cluster.startNode(cluster.node(follower));
            ReplicationClients.awaitFullIsr(admin, List.of(topic));

            // Then
            assertThat(describe(cluster, "--topic", topic, "--under-replicated-partitions"))
                    .as("under-replicated partitions after node %d is back", follower).isEmpty();
            System.out.printf("%s: kafka-topics --describe %s; --under-replicated-partitions with node %d down: %s%n",
                    kind, described, follower, under);
        }
    }

    /** Runs {@code kafka-topics --describe} with {@code args} against the running nodes; its partition lines. */
    private static List<PartitionLine> describe(BrokerCluster cluster, String... args) {
        List<String> all = new ArrayList<>(List.of("--bootstrap-server", runningBootstrap(cluster), "--describe"));
        all.addAll(Arrays.asList(args));
        JavaTool.Result result = KafkaDistribution.tool(TOOL).args(all).timeout(Duration.ofSeconds(90)).build().run();
        assertThat(result.exitCode()).as("kafka-topics %s: %s", all, result).isZero();
        List<PartitionLine> lines = new ArrayList<>();
        for (String line : result.stdout().split("\\R")) {
            Matcher matcher = PARTITION_LINE.matcher(line);
            if (matcher.find()) {
                lines.add(new PartitionLine(Integer.parseInt(matcher.group(1)), matcher.group(2).equals("none") ? -1
                        : Integer.parseInt(matcher.group(2)), ids(matcher.group(3)), ids(matcher.group(4))));
            }
        }
        return lines;
    }

    private static String runningBootstrap(BrokerCluster cluster) {
        return String.join(",", cluster.nodes().stream().filter(node -> node.isRunning())
                .map(node -> node.bootstrapServers()).toList());
    }

    private static List<Integer> ids(String commaSeparated) {
        return commaSeparated.isEmpty() ? List.of()
                : Arrays.stream(commaSeparated.split(",")).map(Integer::parseInt).toList();
    }

    private static List<Integer> ids(List<Node> nodes) {
        return nodes.stream().map(Node::id).toList();
    }

    /** One partition line of {@code kafka-topics --describe}. */
    private record PartitionLine(int partition, int leader, List<Integer> replicas, List<Integer> isr) {
    }
}
