package io.cairn.broker.handler;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.testkit.LeakDetection;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AlterReplicaLogDirsRequestData;
import io.cairn.wire.message.AlterReplicaLogDirsRequestData.AlterReplicaLogDir;
import io.cairn.wire.message.AlterReplicaLogDirsRequestData.AlterReplicaLogDirTopic;
import io.cairn.wire.message.AlterReplicaLogDirsResponseData;
import io.cairn.wire.message.AlterReplicaLogDirsResponseData.AlterReplicaLogDirPartitionResult;
import io.cairn.wire.message.AlterReplicaLogDirsResponseData.AlterReplicaLogDirTopicResult;
import io.cairn.wire.message.ApiKey;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * AlterReplicaLogDirs on a real log directory and replica manager (Kafka's {@code handleAlterReplicaLogDirsRequest}):
 * per-partition codes grouped by topic, the last directory of a partition named twice, the whole-request error.
 * The moves themselves are {@code ReplicaManagerLogDirsIT}'s and {@code AlterReplicaLogDirsIT}'s.
 */
@ExtendWith(LeakDetection.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AlterReplicaLogDirsHandlerTest {

    @TempDir
    static Path dir;
    private static PartitionsFixture fixture;
    private static AlterReplicaLogDirsHandler handler;

    @BeforeAll
    static void start() throws Exception {
        fixture = PartitionsFixture.start(dir);
        handler = new AlterReplicaLogDirsHandler(fixture.replicaManager());
        fixture.createTopicOn("hosted", new ArrayList<>(List.of(1)));
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    private static AlterReplicaLogDir dir(String path, String topic, Integer... partitions) {
        AlterReplicaLogDir dir = new AlterReplicaLogDir().setPath(path);
        dir.topics().add(new AlterReplicaLogDirTopic().setName(topic).setPartitions(List.of(partitions)));
        return dir;
    }

    private static Map<String, Short> codes(AlterReplicaLogDirsResponseData response) {
        Map<String, Short> codes = new TreeMap<>();
        for (AlterReplicaLogDirTopicResult topic : response.results()) {
            for (AlterReplicaLogDirPartitionResult p : topic.partitions()) {
                codes.put(topic.topicName() + "-" + p.partitionIndex(), p.errorCode());
            }
        }
        return codes;
    }

    @Test
    void eachPartitionGetsItsOwnCodeAndANamedTwiceOneItsLastDirectory() throws Exception {
        // Given
        String logDir = fixture.logs().logDir().toAbsolutePath().toString();
        AlterReplicaLogDirsRequestData request = new AlterReplicaLogDirsRequestData();
        request.dirs().add(dir(dir.resolve("missing").toString(), "hosted", 0));
        request.dirs().add(dir(logDir, "hosted", 0));
        request.dirs().add(dir(logDir, "unknown", 3));
        request.dirs().add(dir("relative", "elsewhere", 1));

        // When
        AlterReplicaLogDirsResponseData response = handler.handle(
                MetadataFixture.context(ApiKey.ALTER_REPLICA_LOG_DIRS, 2), request).toCompletableFuture()
                .get(10, TimeUnit.SECONDS);

        // Then
        assertThat(response.throttleTimeMs()).isZero();
        assertThat(codes(response)).containsExactlyInAnyOrderEntriesOf(Map.of(
                "hosted-0", Errors.NONE.code(),
                "unknown-3", Errors.REPLICA_NOT_AVAILABLE.code(),
                "elsewhere-1", Errors.LOG_DIR_NOT_FOUND.code()));
        assertThat(fixture.partition("hosted", 0).futureLog()).isEmpty();
    }

    @Test
    void aWholeRequestErrorGoesToEveryPartition() {
        // Given
        AlterReplicaLogDirsRequestData request = new AlterReplicaLogDirsRequestData();
        request.dirs().add(dir("/a", "t", 0, 1));
        request.dirs().add(dir("/b", "t", 2));

        // When
        AlterReplicaLogDirsResponseData response = handler.errorResponse(
                MetadataFixture.context(ApiKey.ALTER_REPLICA_LOG_DIRS, 1), request,
                Errors.CLUSTER_AUTHORIZATION_FAILED);

        // Then
        short code = Errors.CLUSTER_AUTHORIZATION_FAILED.code();
        assertThat(codes(response)).containsExactlyInAnyOrderEntriesOf(Map.of("t-0", code, "t-1", code, "t-2", code));
    }
}
