package io.cairn.metadata.ratis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.metadata.MetaProperties;
import io.cairn.metadata.MetadataConfig;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.StorageTool;
import io.cairn.metadata.TestRequests;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AddRaftVoterRequestData;
import io.cairn.wire.message.AddRaftVoterResponseData;
import io.cairn.wire.message.BrokerRegistrationResponseData;
import io.cairn.wire.message.CreateTopicsResponseData;
import io.cairn.wire.message.DescribeQuorumRequestData;
import io.cairn.wire.message.DescribeQuorumResponseData;
import io.cairn.wire.message.RemoveRaftVoterRequestData;
import io.cairn.wire.message.RemoveRaftVoterResponseData;
import io.cairn.wire.protocol.Uuid;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * KIP-853 on the Ratis quorum, four controllers in this JVM on loopback: three formatted with
 * {@code --initial-controllers}, a fourth with {@code --no-initial-controllers} that reaches the quorum through
 * {@code controller.quorum.bootstrap.servers} alone. AddRaftVoter makes it a voter (the leader catches it up first),
 * the voter set with its directory ids outlives a restart of every node, RemoveRaftVoter takes it out again (it
 * goes on following the log as an observer), and topics are created through every node all along. The voters
 * snapshot every 8 entries, so the fourth catches up from the leader's snapshot. A leader whose removal it commits
 * answers, then resigns, as Kafka's does, and follows the log as an observer that never stands for election.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class VoterChangeIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final Uuid INCARNATION = MetaProperties.randomUuid();

    @TempDir
    Path dir;

    private final List<MetadataNode> nodes = new ArrayList<>();

    @AfterEach
    void closeNodes() {
        nodes.forEach(MetadataNode::close);
    }

    @Test
    void aJoiningControllerIsAddedKeptAcrossRestartsAndRemoved() throws Exception {
        // Given
        int[] ports = IntStream.range(0, 4).map(i -> TestRequests.freePort()).toArray();
        List<Uuid> directories = IntStream.range(0, 3).mapToObj(i -> MetaProperties.randomUuid()).toList();
        String bootstrap = String.join(",", IntStream.range(0, 3).mapToObj(i -> "localhost:" + ports[i]).toList());
        String initial = String.join(",", IntStream.range(0, 3).mapToObj(i -> (i + 1) + "@localhost:" + ports[i]
                + ":" + directories.get(i)).toList());
        String clusterId = MetaProperties.randomUuid().toString();
        List<Path> configs = new ArrayList<>();
        for (int id = 1; id <= 4; id++) {
            Path file = write(id, ports[id - 1], bootstrap);
            configs.add(file);
            int code = StorageTool.run(id <= 3
                    ? new String[] {"format", "-t", clusterId, "-c", file.toString(), "-I", initial}
                    : new String[] {"format", "-t", clusterId, "-c", file.toString(), "-N"}, quiet());
            assertThat(code).isZero();
        }
        for (int id = 1; id <= 4; id++) {
            nodes.add(MetadataNode.start(MetadataConfig.load(configs.get(id - 1))));
        }
        Uuid fourth = MetaProperties.read(dir.resolve("n4")).orElseThrow().directoryId();
        await().atMost(TIMEOUT).ignoreExceptions().until(() -> voters(nodes.get(0)).size() == 3);
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(nodes.get(0).currentImage()
                .featureLevel("kraft.version")).isEqualTo((short) 1));
        // The fourth, outside the quorum, reaches the active controller through the bootstrap servers.
        assertThat(nodes.get(3).registerBroker(TestRequests.registration(101, null).setIncarnationId(INCARNATION))
                .get(60, TimeUnit.SECONDS).errorCode()).isEqualTo(Errors.NONE.code());
        // Enough entries that the voters snapshot and purge their logs: the leader must send the fourth a snapshot.
        for (int i = 0; i < 12; i++) {
            createTopicThrough(nodes.get(0), "before-" + i);
        }

        // When
        AddRaftVoterRequestData add = new AddRaftVoterRequestData().setClusterId(clusterId).setTimeoutMs(30_000)
                .setVoterId(4).setVoterDirectoryId(fourth);
        add.listeners().add(new AddRaftVoterRequestData.Listener().setName("CONTROLLER").setHost("localhost")
                .setPort(ports[3]));
        AddRaftVoterResponseData added = nodes.get(1).addRaftVoter(add).get(60, TimeUnit.SECONDS);

        // Then
        assertThat(added.errorCode()).as("%s", added).isEqualTo(Errors.NONE.code());
        await().atMost(TIMEOUT).ignoreExceptions().untilAsserted(() -> assertThat(voters(nodes.get(3)))
                .containsEntry(4, fourth).containsEntry(1, directories.get(0)).hasSize(4));
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(nodes.get(3).currentImage().topic("before-11"))
                .isPresent());
        assertThat(nodes.get(2).addRaftVoter(add).get(60, TimeUnit.SECONDS).errorCode())
                .isEqualTo(Errors.DUPLICATE_VOTER.code());
        createTopicThrough(nodes.get(3), "added");
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(nodes.get(3).currentImage().topic("added"))
                .isPresent());

        // When every node restarts from its own storage (three formatted with three voters, one with none)
        nodes.forEach(MetadataNode::close);
        nodes.clear();
        for (int id = 1; id <= 4; id++) {
            nodes.add(MetadataNode.start(MetadataConfig.load(configs.get(id - 1))));
        }

        // Then the four voters are still the quorum
        await().atMost(TIMEOUT).ignoreExceptions().untilAsserted(() -> assertThat(voters(nodes.get(3)))
                .containsEntry(4, fourth).hasSize(4));
        createTopicThrough(nodes.get(3), "restarted");

        // When the fourth is removed by its voter key (an unknown key first)
        RemoveRaftVoterResponseData unknown = nodes.get(0).removeRaftVoter(new RemoveRaftVoterRequestData()
                .setClusterId(clusterId).setVoterId(4).setVoterDirectoryId(directories.get(0)))
                .get(60, TimeUnit.SECONDS);
        RemoveRaftVoterResponseData removed = nodes.get(0).removeRaftVoter(new RemoveRaftVoterRequestData()
                .setClusterId(clusterId).setVoterId(4).setVoterDirectoryId(fourth)).get(60, TimeUnit.SECONDS);

        // Then
        assertThat(unknown.errorCode()).isEqualTo(Errors.VOTER_NOT_FOUND.code());
        assertThat(removed.errorCode()).as("%s", removed).isEqualTo(Errors.NONE.code());
        await().atMost(TIMEOUT).ignoreExceptions().untilAsserted(() -> assertThat(voters(nodes.get(0)))
                .containsOnlyKeys(1, 2, 3));
        createTopicThrough(nodes.get(1), "removed");
        // The removed voter follows the log as an observer (a Ratis listener), as Kafka's removed controller does.
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(nodes.get(3).currentImage().topic("removed"))
                .isPresent());
        await().atMost(TIMEOUT).ignoreExceptions().untilAsserted(() -> assertThat(observers(nodes.get(0)))
                .containsEntry(4, fourth));
    }

    @Test
    void aLeaderThatRemovesItselfAnswersThenResignsAndFollowsAsAnObserver() throws Exception {
        // Given: three voters formatted with --initial-controllers
        int[] ports = IntStream.range(0, 3).map(i -> TestRequests.freePort()).toArray();
        List<Uuid> directories = IntStream.range(0, 3).mapToObj(i -> MetaProperties.randomUuid()).toList();
        String bootstrap = String.join(",", IntStream.range(0, 3).mapToObj(i -> "localhost:" + ports[i]).toList());
        String initial = String.join(",", IntStream.range(0, 3).mapToObj(i -> (i + 1) + "@localhost:" + ports[i]
                + ":" + directories.get(i)).toList());
        String clusterId = MetaProperties.randomUuid().toString();
        for (int id = 1; id <= 3; id++) {
            Path file = write(id, ports[id - 1], bootstrap);
            assertThat(StorageTool.run(new String[] {"format", "-t", clusterId, "-c", file.toString(), "-I",
                initial}, quiet())).isZero();
            nodes.add(MetadataNode.start(MetadataConfig.load(file)));
        }
        await().atMost(TIMEOUT).ignoreExceptions().until(() -> voters(nodes.get(0)).size() == 3);
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(nodes.get(0).currentImage()
                .featureLevel("kraft.version")).isEqualTo((short) 1));
        createTopicThrough(nodes.get(0), "before");
        int first = activeController();
        MetadataNode removedFirst = nodes.get(first - 1);

        // When: the leader's own removal is sent to it
        RemoveRaftVoterResponseData removed = removedFirst.removeRaftVoter(new RemoveRaftVoterRequestData()
                .setClusterId(clusterId).setVoterId(first).setVoterDirectoryId(directories.get(first - 1)))
                .get(60, TimeUnit.SECONDS);

        // Then: it answers once the voter set without it is committed, and resigns: another voter leads
        assertThat(removed.errorCode()).as("%s", removed).isEqualTo(Errors.NONE.code());
        List<Integer> left = IntStream.rangeClosed(1, 3).filter(id -> id != first).boxed().toList();
        MetadataNode other = nodes.get(left.get(0) - 1);
        await().atMost(TIMEOUT).ignoreExceptions().untilAsserted(() -> {
            assertThat(voters(other)).containsOnlyKeys(left);
            assertThat(left).contains(activeController());
        });
        assertThat(removedFirst.isActiveController()).isFalse();
        // and it follows the log as an observer, which never stands for election, and forwards commands
        createTopicThrough(removedFirst, "after-first");
        for (MetadataNode node : nodes) {
            await().atMost(TIMEOUT).untilAsserted(() -> assertThat(node.currentImage().topic("after-first"))
                    .isPresent());
        }
        await().atMost(TIMEOUT).ignoreExceptions().untilAsserted(() -> assertThat(observers(other))
                .containsKey(first));

        // When: the new leader's removal is forwarded by the node removed first
        int second = activeController();
        RemoveRaftVoterResponseData again = removedFirst.removeRaftVoter(new RemoveRaftVoterRequestData()
                .setClusterId(clusterId).setVoterId(second).setVoterDirectoryId(directories.get(second - 1)))
                .get(60, TimeUnit.SECONDS);

        // Then: the answer comes back through it, and the last voter leads
        assertThat(again.errorCode()).as("%s", again).isEqualTo(Errors.NONE.code());
        int last = left.stream().filter(id -> id != second).findFirst().orElseThrow();
        await().atMost(TIMEOUT).ignoreExceptions().untilAsserted(() -> {
            assertThat(voters(nodes.get(second - 1))).containsOnlyKeys(last);
            assertThat(activeController()).isEqualTo(last);
        });
        createTopicThrough(nodes.get(second - 1), "after-second");
        for (MetadataNode node : nodes) {
            await().atMost(TIMEOUT).untilAsserted(() -> assertThat(node.currentImage().topic("after-second"))
                    .isPresent());
        }
        await().atMost(TIMEOUT).ignoreExceptions().untilAsserted(() -> assertThat(observers(nodes.get(last - 1)))
                .containsKeys(first, second));
    }

    /** The id of the one node that is the active controller, waiting for it. */
    private int activeController() {
        return await().atMost(TIMEOUT).until(() -> nodes.stream().filter(MetadataNode::isActiveController)
                .map(MetadataNode::nodeId).toList(), active -> active.size() == 1).get(0);
    }

    private Path write(int id, int port, String bootstrap) throws Exception {
        Path file = dir.resolve("n" + id + ".properties");
        Files.writeString(file, String.join("\n", "process.roles=controller", "node.id=" + id,
                "controller.quorum.bootstrap.servers=" + bootstrap,
                "listeners=CONTROLLER://localhost:" + port, "controller.listener.names=CONTROLLER",
                "controller.quorum.election.timeout.ms=500", "metadata.snapshot.entries=8",
                "log.dirs=" + dir.resolve("n" + id), ""));
        return file;
    }

    /** Creates a topic through {@code node} on broker 101, registered and unfenced through it first. */
    private static void createTopicThrough(MetadataNode node, String name) throws Exception {
        BrokerRegistrationResponseData registered = node.registerBroker(TestRequests.registration(101, null)
                .setIncarnationId(INCARNATION)).get(60, TimeUnit.SECONDS);
        assertThat(registered.errorCode()).as("%s", registered).isEqualTo(Errors.NONE.code());
        node.heartbeat(TestRequests.heartbeat(101, registered.brokerEpoch())).get(60, TimeUnit.SECONDS);
        CreateTopicsResponseData created = node.createTopics(TestRequests.createTopic(name, 1, 1, Map.of()))
                .get(60, TimeUnit.SECONDS);
        assertThat(created.topics().get(0).errorCode()).as("%s", created).isEqualTo(Errors.NONE.code());
    }

    /** The voters and their directory ids, as the active controller describes them through {@code node}. */
    private static Map<Integer, Uuid> voters(MetadataNode node) throws Exception {
        return replicas(node, true);
    }

    /** The observers and their directory ids, as the active controller describes them through {@code node}. */
    private static Map<Integer, Uuid> observers(MetadataNode node) throws Exception {
        return replicas(node, false);
    }

    private static Map<Integer, Uuid> replicas(MetadataNode node, boolean voters) throws Exception {
        DescribeQuorumRequestData request = new DescribeQuorumRequestData();
        DescribeQuorumRequestData.TopicData topic = new DescribeQuorumRequestData.TopicData()
                .setTopicName("__cluster_metadata");
        topic.partitions().add(new DescribeQuorumRequestData.PartitionData().setPartitionIndex(0));
        request.topics().add(topic);
        DescribeQuorumResponseData response = node.describeQuorum(request).get(30, TimeUnit.SECONDS);
        DescribeQuorumResponseData.PartitionData partition = response.topics().get(0).partitions().get(0);
        Map<Integer, Uuid> replicas = new HashMap<>();
        if (partition.errorCode() == Errors.NONE.code()) {
            (voters ? partition.currentVoters() : partition.observers())
                    .forEach(v -> replicas.put(v.replicaId(), v.replicaDirectoryId()));
        }
        return replicas;
    }

    private static PrintStream quiet() {
        return new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8);
    }
}
