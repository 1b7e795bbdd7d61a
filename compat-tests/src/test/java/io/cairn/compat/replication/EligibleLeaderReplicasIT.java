package io.cairn.compat.replication;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.ClusterNode;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.KafkaDistribution;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * KIP-966 eligible leader replicas on a freshly formatted cluster, as Kafka 4.1 enables them by default
 * ({@code eligible.leader.replicas.version=1}): nodes 1-5 are combined nodes (the five voters), node 6 a broker only;
 * nodes 4, 5 and 6 hold the one partition of a topic at replication factor 3 and {@code min.insync.replicas=2}, so
 * the quorum (three of five voters) survives while every replica is down. Two followers stop cleanly (the second one leaves the ISR below the minimum
 * and becomes an eligible leader replica), then the leader (the ISR becomes empty, the leader joins the ELR and is the
 * last known leader); the follower that went into the ELR starts again and is elected leader, a clean election
 * although it had left the ISR. Stock {@code kafka-topics --describe} prints Elr and LastKnownElr at each step, and
 * stock {@code kafka-features describe} lists the finalized levels, {@code disable} and {@code upgrade} change ELR's
 * and an unsupported level is refused; both kinds give the same answers.
 */
@Timeout(600)
@ExtendWith(BrokerLogsExtension.class)
@Tag("faults")
class EligibleLeaderReplicasIT {

    private static final String TOPICS = "org.apache.kafka.tools.TopicCommand";
    private static final String FEATURES = "org.apache.kafka.tools.FeatureCommand";
    private static final int NODES = 6;
    private static final int VOTERS = 5;
    private static final Pattern FEATURE_LINE = Pattern.compile("Feature: (\\S+)\\s+SupportedMinVersion: (\\S+)\\s+"
            + "SupportedMaxVersion: (\\S+)\\s+FinalizedVersionLevel: (\\S+)\\s+Epoch: (\\S+)");

    static Stream<BrokerKind> kinds() {
        return ReplicationClients.kinds();
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void followerInElrIsElectedAfterTheWholeIsrStopped(BrokerKind kind) throws Exception {
        // Given
        try (BrokerCluster cluster = BrokerCluster.create(kind, NODES, Map.of(),
                node -> layout(kind, node));
             Admin admin = ReplicationClients.startAndConnect(cluster)) {
            String topic = ReplicationClients.uniqueName("elr");
            admin.createTopics(List.of(new NewTopic(topic, Map.of(0, List.of(4, 5, 6)))
                    .configs(Map.of("min.insync.replicas", "2")))).all().get(60, TimeUnit.SECONDS);
            ReplicationClients.awaitFullIsr(admin, List.of(topic));
            FeatureMetadata features = admin.describeFeatures().featureMetadata().get(30, TimeUnit.SECONDS);
            assertThat(features.finalizedFeatures().get("eligible.leader.replicas.version").maxVersionLevel())
                    .as("ELR finalized on a new %s cluster", kind).isEqualTo((short) 1);
            Map<String, FeatureLine> described = describeFeatures(cluster);
            assertThat(described.get("eligible.leader.replicas.version"))
                    .isEqualTo(new FeatureLine("0", "1", "1"));
            assertThat(described.get("metadata.version").finalized()).isEqualTo("4.1-IV1");
            assertThat(described.get("metadata.version").max()).isEqualTo("4.1-IV1");
            assertThat(described.keySet()).contains("eligible.leader.replicas.version", "metadata.version");
            List<String> steps = new ArrayList<>();
            steps.add("formatted: " + describedLine(cluster, topic));

            // When: follower 5 stops cleanly; the ISR keeps its minimum
            cluster.node(5).stop();
            awaitPartition(admin, topic, "5 out of the ISR", p -> ids(p.isr()).equals(List.of(4, 6)));
            // Then
            assertThat(describeTopic(cluster, topic)).isEqualTo(new PartitionLine(4, "4,6", "", ""));
            steps.add("5 stopped: " + describedLine(cluster, topic));

            // When: follower 6 stops cleanly; the ISR falls below min.insync.replicas
            cluster.node(6).stop();
            awaitPartition(admin, topic, "6 in the ELR", p -> ids(p.isr()).equals(List.of(4))
                    && ids(p.elr()).equals(List.of(6)));
            // Then
            assertThat(describeTopic(cluster, topic)).isEqualTo(new PartitionLine(4, "4", "6", ""));
            steps.add("6 stopped: " + describedLine(cluster, topic));

            // When: the leader stops cleanly; the ISR becomes empty
            cluster.node(4).stop();
            awaitPartition(admin, topic, "no leader, 4 and 6 in the ELR", p -> p.leader() == null
                    && p.isr().isEmpty() && sortedIds(p.elr()).equals(List.of(4, 6)));
            // Then
            assertThat(describeTopic(cluster, topic)).isEqualTo(new PartitionLine(-1, "", "4,6", "4"));
            steps.add("4 stopped: " + describedLine(cluster, topic));

            // When: follower 6, an eligible leader replica, starts again
            cluster.startNode(cluster.node(6));
            awaitPartition(admin, topic, "6 elected from the ELR", p -> p.leader() != null
                    && p.leader().id() == 6);
            // Then
            assertThat(describeTopic(cluster, topic)).isEqualTo(new PartitionLine(6, "6", "4", ""));
            steps.add("6 started: " + describedLine(cluster, topic));

            // When: kafka-features disables ELR, then upgrades it again (UpdateFeatures through a broker)
            String disabled = features(cluster, 0, "disable", "--feature", "eligible.leader.replicas.version");
            String refused = features(cluster, 1, "upgrade", "--feature", "transaction.version=7");
            // Then
            assertThat(describeFeatures(cluster).get("eligible.leader.replicas.version").finalized()).isEqualTo("0");
            String upgraded = features(cluster, 0, "upgrade", "--feature", "eligible.leader.replicas.version=1");
            assertThat(describeFeatures(cluster).get("eligible.leader.replicas.version").finalized()).isEqualTo("1");
            assertThat(refused).contains("Could not upgrade transaction.version to 7. The update failed for all "
                    + "features since the following feature had an error: Invalid update version 7 for feature "
                    + "transaction.version. Local controller ", " only supports versions 0");
            steps.add("kafka-features disable: " + disabled.trim() + " / upgrade: " + upgraded.trim()
                    + " / refused: " + refused.trim());
            System.out.printf("%s: kafka-features describe %s%n%s: kafka-topics --describe%n  %s%n", kind,
                    described, kind, String.join("\n  ", steps));
        }
    }

    /**
     * Nodes 1-5 are the voters (and brokers); node 6 is a broker only (a Cairn one follows the metadata log as a
     * Ratis listener, on the port the harness reserved for its controller listener).
     */
    private static Map<String, String> layout(BrokerKind kind, ClusterNode node) {
        Map<String, String> settings = new LinkedHashMap<>();
        List<String> voters = Arrays.asList(node.voters().split(","));
        settings.put("controller.quorum.voters", String.join(",", voters.subList(0, VOTERS)));
        if (node.nodeId() > VOTERS) {
            String host = voters.get(0).substring(voters.get(0).indexOf('@') + 1, voters.get(0).lastIndexOf(':'));
            settings.put("process.roles", "broker");
            settings.put("listeners", "PLAINTEXT://" + host + ":" + node.clientPort());
            if (kind == BrokerKind.CAIRN) {
                settings.put("metadata.listener.port", Integer.toString(node.controllerPort()));
            }
        }
        return settings;
    }

    private static void awaitPartition(Admin admin, String topic, String what,
                                       Predicate<TopicPartitionInfo> condition) {
        ReplicationClients.awaitPartitions(admin, List.of(topic), what, condition);
    }

    /** The fields of the partition line ({@code Name: value}, tab-separated) that this scenario checks. */
    private static PartitionLine describeTopic(BrokerCluster cluster, String topic) {
        Map<String, String> fields = new LinkedHashMap<>();
        for (String field : describedLine(cluster, topic).split("\t")) {
            int colon = field.indexOf(':');
            if (colon > 0) {
                fields.put(field.substring(0, colon).trim(), field.substring(colon + 1).trim());
            }
        }
        String leader = fields.getOrDefault("Leader", "?");
        return new PartitionLine(leader.equals("none") ? -1 : Integer.parseInt(leader), fields.get("Isr"),
                fields.get("Elr"), fields.get("LastKnownElr"));
    }

    private static String describedLine(BrokerCluster cluster, String topic) {
        JavaTool.Result result = KafkaDistribution.tool(TOPICS).args("--bootstrap-server", running(cluster),
                "--describe", "--topic", topic).timeout(Duration.ofSeconds(90)).build().run();
        assertThat(result.exitCode()).as("kafka-topics: %s", result).isZero();
        return Arrays.stream(result.stdout().split("\\R")).filter(line -> line.contains("Partition: 0"))
                .findFirst().orElseThrow(() -> new AssertionError("no partition line in " + result)).trim();
    }

    private static Map<String, FeatureLine> describeFeatures(BrokerCluster cluster) {
        JavaTool.Result result = KafkaDistribution.tool(FEATURES).args("--bootstrap-server", running(cluster),
                "describe").timeout(Duration.ofSeconds(90)).build().run();
        assertThat(result.exitCode()).as("kafka-features: %s", result).isZero();
        Map<String, FeatureLine> features = new LinkedHashMap<>();
        for (String line : result.stdout().split("\\R")) {
            Matcher matcher = FEATURE_LINE.matcher(line);
            if (matcher.find()) {
                assertThat(Long.parseLong(matcher.group(5))).as("epoch of %s", line).isNotNegative();
                features.put(matcher.group(1), new FeatureLine(matcher.group(2), matcher.group(3), matcher.group(4)));
            }
        }
        return features;
    }

    /** Runs {@code kafka-features} with {@code args}; its stdout and stderr once it exited with {@code exitCode}. */
    private static String features(BrokerCluster cluster, int exitCode, String... args) {
        List<String> all = new ArrayList<>(List.of("--bootstrap-server", running(cluster)));
        all.addAll(Arrays.asList(args));
        JavaTool.Result result = KafkaDistribution.tool(FEATURES).args(all).timeout(Duration.ofSeconds(90)).build()
                .run();
        assertThat(result.exitCode()).as("kafka-features %s: %s", all, result).isEqualTo(exitCode);
        return result.stdout() + result.stderr();
    }

    private static String running(BrokerCluster cluster) {
        return String.join(",", cluster.nodes().stream().filter(node -> node.isRunning())
                .map(node -> node.bootstrapServers()).toList());
    }

    private static List<Integer> ids(List<Node> nodes) {
        return nodes.stream().map(Node::id).toList();
    }

    private static List<Integer> sortedIds(List<Node> nodes) {
        return nodes.stream().map(Node::id).sorted().toList();
    }

    /** One partition line of {@code kafka-topics --describe}: Leader (-1 for none), Isr, Elr, LastKnownElr. */
    private record PartitionLine(int leader, String isr, String elr, String lastKnownElr) {
    }

    /** One feature line of {@code kafka-features describe}, without its epoch. */
    private record FeatureLine(String min, String max, String finalized) {
    }
}
