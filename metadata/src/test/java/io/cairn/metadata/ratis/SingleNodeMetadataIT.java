package io.cairn.metadata.ratis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.cairn.metadata.MetaProperties;
import io.cairn.metadata.MetadataConfig;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.TestRequests;
import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.MetadataUpdate;
import io.cairn.metadata.image.TopicImage;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.BrokerHeartbeatResponseData;
import io.cairn.wire.message.BrokerRegistrationResponseData;
import io.cairn.wire.message.CreateTopicsResponseData;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SingleNodeMetadataIT {

    @TempDir
    Path dir;

    private MetadataConfig config(int port, long snapshotEntries) {
        return MetadataConfig.from(Map.of("process.roles", "broker,controller", "node.id", "1",
                "controller.quorum.voters", "1@localhost:" + port, "metadata.log.dir", dir.toString(),
                "controller.quorum.election.timeout.ms", "300", "metadata.snapshot.entries",
                Long.toString(snapshotEntries)));
    }

    @Test
    void aSoleCombinedNodeFormatsItselfCreatesTopicsAndKeepsThemAcrossARestart() throws Exception {
        // Given a combined node with an empty metadata dir
        int port = TestRequests.freePort();
        String clusterId;
        MetadataImage before;
        List<MetadataUpdate> updates = new CopyOnWriteArrayList<>();
        try (MetadataNode node = MetadataNode.start(config(port, 10))) {
            clusterId = node.clusterId();
            node.subscribe(updates::add);
            BrokerRegistrationResponseData registered = node.registerBroker(TestRequests.registration(1, null))
                    .get(30, TimeUnit.SECONDS);
            assertThat(registered.errorCode()).isEqualTo(Errors.NONE.code());
            BrokerHeartbeatResponseData heartbeat = node.heartbeat(TestRequests.heartbeat(1,
                    registered.brokerEpoch())).get(10, TimeUnit.SECONDS);
            assertThat(heartbeat.isFenced()).isFalse();

            // When topics are created
            for (int i = 0; i < 20; i++) {
                CreateTopicsResponseData created = node.createTopics(TestRequests.createTopic("topic-" + i, 3, 1,
                        Map.of("retention.ms", "1000"))).get(10, TimeUnit.SECONDS);
                assertThat(created.topics().get(0).errorCode()).isEqualTo(Errors.NONE.code());
            }
            CreateTopicsResponseData duplicate = node.createTopics(TestRequests.createTopic("topic-0", 1, 1,
                    Map.of())).get(10, TimeUnit.SECONDS);
            assertThat(duplicate.topics().get(0).errorCode()).isEqualTo(Errors.TOPIC_ALREADY_EXISTS.code());
            before = node.currentImage();
        }

        // Then the cluster id is in meta.properties, subscribers saw every topic, and a restart keeps everything
        assertThat(MetaProperties.read(dir).orElseThrow().clusterId()).isEqualTo(clusterId);
        assertThat(updates.stream().flatMap(u -> u.changes().createdTopics().stream()).distinct().count())
                .isEqualTo(20);
        assertThat(before.topicsById()).hasSize(20);
        assertThat(before.clusterId()).isEqualTo(clusterId);
        try (MetadataNode node = MetadataNode.start(config(port, 10))) {
            MetadataImage after = node.currentImage();
            assertThat(after.topicsById()).isEqualTo(before.topicsById());
            assertThat(after.brokers()).isEqualTo(before.brokers());
            assertThat(after.configs(ConfigResource.topic("topic-7"))).containsEntry("retention.ms", "1000");
            TopicImage topic = after.topic("topic-3").orElseThrow();
            assertThat(topic.partitions()).hasSize(3);
            assertThat(topic.partitions().get(0).leader()).isEqualTo(1);
            assertThat(node.clusterId()).isEqualTo(clusterId);
            // and the restarted node is again the active controller and commits
            CreateTopicsResponseData created = node.createTopics(TestRequests.createTopic("after-restart", 1, 1,
                    Map.of())).get(30, TimeUnit.SECONDS);
            assertThat(created.topics().get(0).errorCode()).isEqualTo(Errors.NONE.code());
            assertThat(node.currentImage().topic("after-restart")).isPresent();
        }
    }

    @Test
    void aNodeThatCannotBindItsPortFailsToStartAndLeavesNoRaftThreadsBehind() throws Exception {
        // Given a voter whose port is taken (a lingering voter that cannot be reached would disrupt elections)
        int port = TestRequests.freePort();
        MetadataConfig config = MetadataConfig.from(Map.of("process.roles", "broker,controller", "node.id", "7",
                "controller.quorum.voters", "7@localhost:" + port, "metadata.log.dir", dir.toString(),
                "controller.quorum.election.timeout.ms", "300"));
        try (ServerSocket taken = new ServerSocket(port)) {
            // When
            assertThatThrownBy(() -> MetadataNode.start(config)).isInstanceOf(IOException.class);
        }

        // Then
        await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> assertThat(Thread.getAllStackTraces().keySet())
                .filteredOn(Thread::isAlive).extracting(Thread::getName)
                .noneMatch(name -> name.startsWith("7@")));
    }
}
