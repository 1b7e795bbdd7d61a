package io.cairn.broker.handler;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.testkit.LeakDetection;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.DescribeLogDirsRequestData;
import io.cairn.wire.message.DescribeLogDirsRequestData.DescribableLogDirTopic;
import io.cairn.wire.message.DescribeLogDirsResponseData;
import io.cairn.wire.message.DescribeLogDirsResponseData.DescribeLogDirsPartition;
import io.cairn.wire.message.DescribeLogDirsResponseData.DescribeLogDirsResult;
import io.cairn.wire.message.DescribeLogDirsResponseData.DescribeLogDirsTopic;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** DescribeLogDirs on a real log directory and replica manager (Kafka's {@code ReplicaManager.describeLogDirs}). */
@ExtendWith(LeakDetection.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DescribeLogDirsHandlerTest {

    @TempDir
    static Path dir;
    private static PartitionsFixture fixture;
    private static DescribeLogDirsHandler handler;

    @BeforeAll
    static void start() throws Exception {
        fixture = PartitionsFixture.start(dir);
        handler = new DescribeLogDirsHandler(fixture.replicaManager());
        fixture.createTopicOn("sized", new ArrayList<>(List.of(1)));
        fixture.createTopicOn("other", new ArrayList<>(List.of(1)));
        fixture.append("sized", 0, 1L, 2L, 3L);
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    private static DescribeLogDirsResult only(DescribeLogDirsRequestData request) throws Exception {
        DescribeLogDirsResponseData response = handler.handle(MetadataFixture.context(ApiKey.DESCRIBE_LOG_DIRS, 4),
                request).toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThat(response.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(response.results()).hasSize(1);
        return response.results().get(0);
    }

    @Test
    void nullTopicsDescribesEveryLogWithItsSizeAndTheVolumesSpace() throws Exception {
        // When
        DescribeLogDirsResult result = only(new DescribeLogDirsRequestData().setTopics(null));

        // Then
        assertThat(result.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(result.logDir()).isEqualTo(fixture.logs().logDir().toAbsolutePath().toString());
        assertThat(result.totalBytes()).isPositive();
        assertThat(result.usableBytes()).isPositive().isLessThanOrEqualTo(result.totalBytes());
        assertThat(result.topics()).extracting(DescribeLogDirsTopic::name).contains("sized", "other");
        DescribeLogDirsPartition sized = result.topics().stream().filter(t -> t.name().equals("sized"))
                .findFirst().orElseThrow().partitions().get(0);
        assertThat(sized.partitionIndex()).isZero();
        assertThat(sized.partitionSize()).isEqualTo(fixture.partition("sized", 0).log().size()).isPositive();
        assertThat(sized.offsetLag()).isZero();
        assertThat(sized.isFutureKey()).isFalse();
    }

    @Test
    void namedPartitionsOnlyAndTopicsWithoutAMatchAreLeftOut() throws Exception {
        // Given
        DescribeLogDirsRequestData request = new DescribeLogDirsRequestData();
        request.topics().add(new DescribableLogDirTopic().setTopic("sized").setPartitions(new ArrayList<>(
                List.of(0, 7))));
        request.topics().add(new DescribableLogDirTopic().setTopic("missing").setPartitions(new ArrayList<>(
                List.of(0))));

        // When
        DescribeLogDirsResult result = only(request);

        // Then
        assertThat(result.topics()).extracting(DescribeLogDirsTopic::name).containsExactly("sized");
        assertThat(result.topics().get(0).partitions()).extracting(DescribeLogDirsPartition::partitionIndex)
                .containsExactly(0);
    }

    @Test
    void aFutureLogIsListedAsAFutureReplicaWithItsLagBehindTheCurrentLog() throws Exception {
        // Given: a move's future log of sized-0 that has copied nothing yet
        io.cairn.log.PartitionLog current = fixture.partition("sized", 0).log();
        fixture.logs().createFutureLog("sized", 0, current.config(), null, current.logStartOffset());
        try {
            // When
            DescribeLogDirsResult result = only(new DescribeLogDirsRequestData().setTopics(null));

            // Then
            List<DescribeLogDirsPartition> sized = result.topics().stream().filter(t -> t.name().equals("sized"))
                    .findFirst().orElseThrow().partitions();
            assertThat(sized).extracting(DescribeLogDirsPartition::isFutureKey).containsExactlyInAnyOrder(false, true);
            DescribeLogDirsPartition future = sized.stream().filter(DescribeLogDirsPartition::isFutureKey)
                    .findFirst().orElseThrow();
            assertThat(future.partitionIndex()).isZero();
            assertThat(future.offsetLag()).isEqualTo(current.logEndOffset()).isPositive();
        } finally {
            fixture.logs().deleteFutureLog("sized", 0);
        }
    }
}
