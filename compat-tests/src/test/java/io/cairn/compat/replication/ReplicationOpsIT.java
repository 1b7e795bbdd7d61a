package io.cairn.compat.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.compat.harness.KafkaHalfInFaults;
import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.CairnProcess;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.KafkaDistribution;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterPartitionReassignmentsOptions;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.ElectionNotNeededException;
import org.apache.kafka.common.errors.InvalidReplicaAssignmentException;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.errors.NoReassignmentInProgressException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Operating a three-node cluster with Kafka's own tools and admin client, the same on Cairn and the reference Kafka:
 * {@code kafka-leader-election --election-type preferred --all-topic-partitions} and {@code Admin.electLeaders}
 * (including their error outcomes), automatic leader balancing, a SIGTERM that moves every leadership away (and the
 * broker out of every ISR) before the broker stops, and partition reassignments: a reorder that completes at once,
 * one to a stopped broker that stays listed until it is cancelled, Kafka's errors for bad targets, and
 * {@code kafka-reassign-partitions --execute/--verify}. Completing a
 * reassignment that moves data needs followers that fetch, which this scenario does not rely on.
 */
@Timeout(600)
@ExtendWith(BrokerLogsExtension.class)
class ReplicationOpsIT {

    /** The temp files and directories of this class's tests, removed after them. */
    @TempDir
    static Path tmp;

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    /**
     * Followers stay in the ISR for the whole scenario: preferred elections need the preferred replica in the ISR,
     * and none of this needs data to move (Cairn's followers do not fetch yet).
     */
    private static final String LAG = "600000";
    private static final String ELECTION_TOOL = "org.apache.kafka.tools.LeaderElectionCommand";
    private static final String REASSIGN_TOOL = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand";

    private static Admin admin(BrokerCluster cluster) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 30_000);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 60_000);
        return Admin.create(props);
    }

    private static void create(Admin admin, String topic, Map<Integer, List<Integer>> assignment) throws Exception {
        admin.createTopics(List.of(new NewTopic(topic, assignment))).all().get(60, TimeUnit.SECONDS);
        await().atMost(TIMEOUT).pollInSameThread().untilAsserted(() -> assertThat(leaders(admin, topic))
                .containsExactlyElementsOf(new TreeMap<>(assignment).values().stream().map(r -> r.get(0)).toList()));
    }

    /** The topic as a broker describes it; a broker that does not know it yet fails an await's assertion. */
    private static TopicDescription describe(Admin admin, String topic) throws Exception {
        try {
            return admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic);
        } catch (ExecutionException e) {
            throw new AssertionError("describing " + topic + " failed", e.getCause());
        }
    }

    private static List<Integer> leaders(Admin admin, String topic) throws Exception {
        return describe(admin, topic).partitions().stream()
                .map(p -> p.leader() == null ? -1 : p.leader().id()).toList();
    }

    private static List<Integer> ids(List<Node> nodes) {
        return nodes.stream().map(Node::id).toList();
    }

    private static JavaTool.Result electPreferredEverywhere(BrokerCluster cluster) {
        return KafkaDistribution.tool(ELECTION_TOOL).args(List.of("--bootstrap-server", cluster.bootstrapServers(),
                "--election-type", "preferred", "--all-topic-partitions")).timeout(Duration.ofSeconds(90)).build()
                .run();
    }

    private static void reorder(Admin admin, TopicPartition tp, List<Integer> replicas) throws Exception {
        admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(replicas))))
                .all().get(30, TimeUnit.SECONDS);
        await().atMost(TIMEOUT).pollInSameThread().untilAsserted(() -> assertThat(ids(describe(admin, tp.topic())
                .partitions().get(tp.partition()).replicas())).containsExactlyElementsOf(replicas));
    }

    private static Throwable failureOf(org.apache.kafka.common.KafkaFuture<?> future) throws Exception {
        try {
            future.get(30, TimeUnit.SECONDS);
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        }
    }

    @KafkaHalfInFaults
    void preferredLeaderElectionControlledShutdownAndReassignments(BrokerKind kind) throws Exception {
        // Given: no automatic balancing, and a session long enough that only a controlled shutdown moves leaders
        try (BrokerCluster cluster = BrokerCluster.create(kind, 3, Map.of("auto.leader.rebalance.enable", "false",
                "broker.session.timeout.ms", "60000", "replica.lag.time.max.ms", LAG))) {
            cluster.start();
            try (Admin admin = admin(cluster)) {
                create(admin, "elect", Map.of(0, List.of(1, 2, 3), 1, List.of(2, 3, 1)));
                TopicPartition elect0 = new TopicPartition("elect", 0);
                TopicPartition elect1 = new TopicPartition("elect", 1);

                // When: every leader is preferred, then partition 0's preferred replica becomes broker 2
                JavaTool.Result nothingToDo = electPreferredEverywhere(cluster);
                reorder(admin, elect0, List.of(2, 1, 3));
                assertThat(leaders(admin, "elect")).containsExactly(1, 2);
                assertThat(admin.listPartitionReassignments().reassignments().get(30, TimeUnit.SECONDS)).isEmpty();
                JavaTool.Result elected = electPreferredEverywhere(cluster);

                // Then
                assertThat(nothingToDo.exitCode()).as(nothingToDo.toString()).isZero();
                assertThat(nothingToDo.stdout()).doesNotContain("Error");
                assertThat(elected.exitCode()).as(elected.toString()).isZero();
                assertThat(elected.stdout())
                        .contains("Successfully completed leader election (PREFERRED) for partitions elect-0");
                await().atMost(TIMEOUT).pollInSameThread()
                        .untilAsserted(() -> assertThat(leaders(admin, "elect")).containsExactly(2, 2));
                Map<TopicPartition, Optional<Throwable>> again = admin.electLeaders(ElectionType.PREFERRED,
                        Set.of(elect0, new TopicPartition("elect", 7))).partitions().get(30, TimeUnit.SECONDS);
                assertThat(again.get(elect0)).containsInstanceOf(ElectionNotNeededException.class);
                assertThat(again.get(new TopicPartition("elect", 7)))
                        .containsInstanceOf(UnknownTopicOrPartitionException.class);
                assertThat(admin.electLeaders(ElectionType.UNCLEAN, Set.of(elect1)).partitions()
                        .get(30, TimeUnit.SECONDS).get(elect1)).containsInstanceOf(ElectionNotNeededException.class);

                reassignPartitionsToolReordersReplicas(cluster, admin);
                controlledShutdownMovesLeadershipFirst(cluster, admin);
                reassignmentsStartListAndCancel(admin);
            }
        }
    }

    /**
     * {@code kafka-reassign-partitions --execute} then a plain {@code --verify} (which also clears throttles with
     * IncrementalAlterConfigs on the brokers and the topic) of a reorder, which completes at once.
     */
    private static void reassignPartitionsToolReordersReplicas(BrokerCluster cluster, Admin admin) throws Exception {
        Path plan = Files.createTempFile(tmp, "reassign", ".json");
        Files.writeString(plan, "{\"version\":1,\"partitions\":[{\"topic\":\"elect\",\"partition\":1,"
                + "\"replicas\":[3,2,1]}]}");

        JavaTool.Result executed = reassignTool(cluster, "--execute", "--reassignment-json-file", plan.toString());
        JavaTool.Result verified = reassignTool(cluster, "--verify", "--reassignment-json-file", plan.toString());

        assertThat(executed.exitCode()).as(executed.toString()).isZero();
        assertThat(executed.stdout()).contains("Successfully started partition reassignment for elect-1");
        assertThat(verified.exitCode()).as(verified.toString()).isZero();
        assertThat(verified.stdout()).contains("Reassignment of partition elect-1 is completed.");
        assertThat(ids(describe(admin, "elect").partitions().get(1).replicas())).containsExactly(3, 2, 1);
        assertThat(leaders(admin, "elect")).containsExactly(2, 2);
        Files.delete(plan);
    }

    private static JavaTool.Result reassignTool(BrokerCluster cluster, String... args) {
        List<String> all = new ArrayList<>(List.of("--bootstrap-server", cluster.bootstrapServers()));
        all.addAll(List.of(args));
        return KafkaDistribution.tool(REASSIGN_TOOL).args(all).timeout(Duration.ofSeconds(90)).build().run();
    }

    /** SIGTERM of broker 3: its leaderships and ISR memberships are gone although its session would last 60 s. */
    private static void controlledShutdownMovesLeadershipFirst(BrokerCluster cluster, Admin admin) throws Exception {
        create(admin, "drain", Map.of(0, List.of(3, 1, 2), 1, List.of(3, 2, 1)));

        cluster.node(3).stop();

        await().atMost(Duration.ofSeconds(10)).pollInSameThread().untilAsserted(() -> {
            List<TopicPartitionInfo> partitions = describe(admin, "drain").partitions();
            assertThat(partitions).extracting(p -> p.leader().id()).containsExactly(1, 2);
            assertThat(partitions).allSatisfy(p -> assertThat(ids(p.isr())).doesNotContain(3));
        });
        if (cluster.node(3) instanceof CairnProcess cairn) {
            // The leaderships moved while the broker still served: before it closed its partition logs.
            List<String> log = Files.readAllLines(cairn.logFile());
            int drained = indexOf(log, "completed its controlled shutdown");
            assertThat(drained).isNotNegative();
            assertThat(indexOf(log, "[Partition drain-0 broker=3] Follower")).isBetween(0, drained);
            assertThat(indexOf(log, "INFO Closed ")).isGreaterThan(drained);
        }
    }

    private static int indexOf(List<String> lines, String text) {
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains(text)) {
                return i;
            }
        }
        return -1;
    }

    /** With broker 3 stopped (registered, fenced), a move of an RF 1 partition to it stays in progress. */
    private static void reassignmentsStartListAndCancel(Admin admin) throws Exception {
        create(admin, "move", Map.of(0, List.of(1)));
        TopicPartition move = new TopicPartition("move", 0);

        admin.alterPartitionReassignments(Map.of(move, Optional.of(new NewPartitionReassignment(List.of(3)))))
                .all().get(30, TimeUnit.SECONDS);
        Map<TopicPartition, PartitionReassignment> ongoing = admin.listPartitionReassignments().reassignments()
                .get(30, TimeUnit.SECONDS);
        Map<TopicPartition, PartitionReassignment> named = admin.listPartitionReassignments(Set.of(move,
                new TopicPartition("elect", 0))).reassignments().get(30, TimeUnit.SECONDS);
        Throwable unknownBroker = failureOf(admin.alterPartitionReassignments(Map.of(new TopicPartition("elect", 1),
                Optional.of(new NewPartitionReassignment(List.of(1, 9))))).all());
        Throwable rfChange = failureOf(admin.alterPartitionReassignments(Map.of(new TopicPartition("elect", 1),
                Optional.of(new NewPartitionReassignment(List.of(1, 2)))),
                new AlterPartitionReassignmentsOptions().allowReplicationFactorChange(false)).all());
        Throwable nothingToCancel = failureOf(admin.alterPartitionReassignments(Map.of(
                new TopicPartition("elect", 1), Optional.empty())).all());
        Throwable unknownTopic = failureOf(admin.alterPartitionReassignments(Map.of(new TopicPartition("nope", 0),
                Optional.of(new NewPartitionReassignment(List.of(1))))).all());
        admin.alterPartitionReassignments(Map.of(move, Optional.empty())).all().get(30, TimeUnit.SECONDS);

        assertThat(ongoing).containsOnlyKeys(move);
        assertThat(ongoing.get(move).replicas()).containsExactly(3, 1);
        assertThat(ongoing.get(move).addingReplicas()).containsExactly(3);
        assertThat(ongoing.get(move).removingReplicas()).containsExactly(1);
        assertThat(named).containsOnlyKeys(move);
        assertThat(unknownBroker).isInstanceOf(InvalidReplicaAssignmentException.class)
                .hasMessage("The manual partition assignment includes broker 9, but no such broker is registered.");
        assertThat(rfChange).isInstanceOf(InvalidReplicationFactorException.class)
                .hasMessage("The replication factor is changed from 3 to 2");
        assertThat(nothingToCancel).isInstanceOf(NoReassignmentInProgressException.class);
        assertThat(unknownTopic).isInstanceOf(UnknownTopicOrPartitionException.class)
                .hasMessage("Unable to find a topic named nope.");
        await().atMost(TIMEOUT).pollInSameThread().untilAsserted(() -> {
            assertThat(admin.listPartitionReassignments().reassignments().get(30, TimeUnit.SECONDS)).isEmpty();
            TopicPartitionInfo p = describe(admin, "move").partitions().get(0);
            assertThat(ids(p.replicas())).containsExactly(1);
            assertThat(ids(p.isr())).containsExactly(1);
            assertThat(p.leader().id()).isEqualTo(1);
        });
    }

    @KafkaHalfInFaults
    void theControllerMovesLeadershipBackToThePreferredReplicaByItself(BrokerKind kind) throws Exception {
        // Given: balancing every second (Kafka's minimum)
        try (BrokerCluster cluster = BrokerCluster.create(kind, 3,
                Map.of("leader.imbalance.check.interval.seconds", "1", "replica.lag.time.max.ms", LAG))) {
            cluster.start();
            try (Admin admin = admin(cluster)) {
                create(admin, "balance", Map.of(0, List.of(1, 2, 3)));

                // When: broker 2 becomes the preferred replica of a partition broker 1 leads
                reorder(admin, new TopicPartition("balance", 0), List.of(2, 1, 3));

                // Then
                await().atMost(TIMEOUT).pollInSameThread()
                        .untilAsserted(() -> assertThat(leaders(admin, "balance")).containsExactly(2));
            }
        }
    }
}
