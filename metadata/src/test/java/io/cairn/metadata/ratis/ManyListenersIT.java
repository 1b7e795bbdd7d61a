package io.cairn.metadata.ratis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.metadata.MetaProperties;
import io.cairn.metadata.MetadataConfig;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.StorageTool;
import io.cairn.metadata.TestRequests;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.BrokerRegistrationResponseData;
import io.cairn.wire.message.CreateTopicsResponseData;
import io.cairn.wire.message.DescribeQuorumRequestData;
import io.cairn.wire.message.DescribeQuorumResponseData;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka's production layout on the metadata quorum: three controllers and three broker-only nodes, all in this JVM
 * on loopback. Every broker-only node joins the Ratis group as a listener (one after the other, or all at once) and
 * keeps following the log after the others joined.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class ManyListenersIT {

    private static final int CONTROLLERS = 3;
    private static final List<Integer> BROKERS = List.of(101, 102, 103);

    @TempDir
    Path dir;

    @Test
    void listenersStartedOneByOneAllFollowTheLog() throws Exception {
        run(true);
    }

    @Test
    void listenersStartedTogetherAllFollowTheLog() throws Exception {
        run(false);
    }

    /**
     * Three controllers, then three broker-only nodes (each waiting until the quorum lists it when
     * {@code oneByOne}); brokers register and create topics through them, and every node must see everything.
     */
    private void run(boolean oneByOne) throws Exception {
        Map<Integer, Integer> ports = new HashMap<>();
        List<String> voterEntries = new ArrayList<>();
        for (int id = 1; id <= CONTROLLERS; id++) {
            ports.put(id, TestRequests.freePort());
            voterEntries.add(id + "@localhost:" + ports.get(id));
        }
        String voters = String.join(",", voterEntries);
        String clusterId = MetaProperties.randomUuid().toString();
        List<MetadataNode> nodes = new ArrayList<>();
        try {
            // Given three controllers
            for (int id = 1; id <= CONTROLLERS; id++) {
                nodes.add(start(clusterId, config(id, voters, Map.of("process.roles", "controller"))));
            }
            await().atMost(Duration.ofSeconds(60)).until(() -> nodes.stream()
                    .anyMatch(MetadataNode::isActiveController));
            // and three broker-only nodes
            List<MetadataNode> listeners = new ArrayList<>();
            for (int broker : BROKERS) {
                MetadataNode listener = start(clusterId, config(broker, voters, Map.of("process.roles", "broker",
                        "metadata.listener.port", Integer.toString(TestRequests.freePort()))));
                nodes.add(listener);
                listeners.add(listener);
                if (oneByOne) {
                    await().atMost(Duration.ofSeconds(60)).ignoreExceptions()
                            .until(() -> observers(listener).contains(broker));
                }
            }
            await().atMost(Duration.ofSeconds(60)).ignoreExceptions().untilAsserted(() ->
                    assertThat(observers(nodes.get(0))).containsExactlyInAnyOrderElementsOf(BROKERS));

            // When each registers its broker and a topic is created through each of them
            for (int i = 0; i < listeners.size(); i++) {
                BrokerRegistrationResponseData registered = listeners.get(i)
                        .registerBroker(TestRequests.registration(BROKERS.get(i), null)).get(30, TimeUnit.SECONDS);
                assertThat(registered.errorCode()).isEqualTo(Errors.NONE.code());
                listeners.get(i).heartbeat(TestRequests.heartbeat(BROKERS.get(i), registered.brokerEpoch()))
                        .get(30, TimeUnit.SECONDS);
            }
            for (int i = 0; i < listeners.size(); i++) {
                CreateTopicsResponseData created = listeners.get(i).createTopics(TestRequests.createTopic(
                        "topic-" + i, 3, 1, Map.of())).get(30, TimeUnit.SECONDS);
                assertThat(created.topics().get(0).errorCode()).isEqualTo(Errors.NONE.code());
            }

            // Then every node's image holds every topic and every broker, and the quorum still lists every listener
            for (MetadataNode node : nodes) {
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                    assertThat(node.currentImage().topicsById()).as("topics on node %d", node.nodeId()).hasSize(3);
                    assertThat(node.currentImage().brokers()).as("brokers on node %d", node.nodeId()).hasSize(3);
                });
            }
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() ->
                    assertThat(observers(nodes.get(0))).containsExactlyInAnyOrderElementsOf(BROKERS));
        } finally {
            nodes.forEach(MetadataNode::close);
        }
    }

    private MetadataConfig config(int id, String voters, Map<String, String> extra) {
        Map<String, String> props = new HashMap<>(Map.of("node.id", Integer.toString(id),
                "controller.quorum.voters", voters, "metadata.log.dir", dir.resolve("n" + id).toString(),
                "log.dirs", dir.resolve("n" + id).toString(), "controller.quorum.election.timeout.ms", "500"));
        props.putAll(extra);
        return MetadataConfig.from(props);
    }

    private static MetadataNode start(String clusterId, MetadataConfig config) throws IOException {
        StorageTool.format(config, clusterId, false,
                new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8));
        return MetadataNode.start(config);
    }

    /** The observers (Ratis listeners) in the active controller's committed configuration, asked through node. */
    private static List<Integer> observers(MetadataNode node) throws Exception {
        DescribeQuorumRequestData request = new DescribeQuorumRequestData();
        DescribeQuorumRequestData.TopicData topic = new DescribeQuorumRequestData.TopicData()
                .setTopicName("__cluster_metadata");
        topic.partitions().add(new DescribeQuorumRequestData.PartitionData().setPartitionIndex(0));
        request.topics().add(topic);
        DescribeQuorumResponseData response = (DescribeQuorumResponseData) node.submit(request)
                .get(30, TimeUnit.SECONDS);
        DescribeQuorumResponseData.PartitionData partition = response.topics().get(0).partitions().get(0);
        if (partition.errorCode() != Errors.NONE.code()) {
            return List.of();
        }
        return partition.observers().stream().map(DescribeQuorumResponseData.ReplicaState::replicaId).toList();
    }
}
