package io.cairn.compat.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.CairnProcess;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A real Cairn process keeps its topics (ids, partitions, configs) and its cluster id across a SIGTERM restart
 * and across a SIGKILL restart: the metadata log in log.dirs is the only state.
 */
@Timeout(300)
@ExtendWith(BrokerLogsExtension.class)
@Tag("faults")
class TopicsSurviveRestartIT {

    @Test
    void topicsSurviveAStopAndAKill() throws Exception {
        // Given
        try (CairnProcess cairn = CairnProcess.create()) {
            cairn.start();
            Uuid id;
            String clusterId;
            try (Admin admin = AdminTopicsIT.admin(cairn)) {
                admin.createTopics(List.of(new NewTopic("kept", 3, (short) 1)
                        .configs(Map.of("cleanup.policy", "compact")))).all().get(30, TimeUnit.SECONDS);
                id = admin.describeTopics(List.of("kept")).allTopicNames().get(30, TimeUnit.SECONDS).get("kept")
                        .topicId();
                clusterId = admin.describeCluster().clusterId().get(30, TimeUnit.SECONDS);
            }

            // When
            cairn.stop();
            cairn.start();

            // Then
            assertKept(cairn, id, clusterId);

            // When
            cairn.kill();
            cairn.start();

            // Then
            assertKept(cairn, id, clusterId);
            assertThat(cairn.logLinesContaining("LEAK:")).isEmpty();
        }
    }

    private static void assertKept(CairnProcess cairn, Uuid id, String clusterId) throws Exception {
        try (Admin admin = AdminTopicsIT.admin(cairn)) {
            assertThat(admin.describeCluster().clusterId().get(30, TimeUnit.SECONDS)).isEqualTo(clusterId);
            assertThat(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS)).extracting(n -> n.id())
                    .containsExactly(1);
            TopicDescription topic = admin.describeTopics(List.of("kept")).allTopicNames()
                    .get(30, TimeUnit.SECONDS).get("kept");
            assertThat(topic.topicId()).isEqualTo(id);
            assertThat(topic.partitions()).hasSize(3);
            assertThat(topic.partitions()).allSatisfy(p -> assertThat(p.leader().id()).isEqualTo(1));
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, "kept");
            assertThat(admin.describeConfigs(List.of(resource)).all().get(30, TimeUnit.SECONDS).get(resource)
                    .get("cleanup.policy").value()).isEqualTo("compact");
        }
    }
}
