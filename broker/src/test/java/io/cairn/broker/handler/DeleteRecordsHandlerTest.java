package io.cairn.broker.handler;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.produce.DeleteRecordsService;
import io.cairn.broker.purgatory.MockTimer;
import io.cairn.broker.purgatory.PartitionPurgatory;
import io.cairn.isr.Partition;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.testkit.LeakDetection;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.CreateTopicsRequestData;
import io.cairn.wire.message.CreateTopicsRequestData.CreatableReplicaAssignment;
import io.cairn.wire.message.CreateTopicsRequestData.CreatableTopic;
import io.cairn.wire.message.CreateTopicsRequestData.CreatableTopicConfig;
import io.cairn.wire.message.DeleteRecordsRequestData;
import io.cairn.wire.message.DeleteRecordsRequestData.DeleteRecordsPartition;
import io.cairn.wire.message.DeleteRecordsRequestData.DeleteRecordsTopic;
import io.cairn.wire.message.DeleteRecordsResponseData;
import io.cairn.wire.message.DeleteRecordsResponseData.DeleteRecordsPartitionResult;
import io.cairn.wire.message.DeleteTopicsRequestData;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * DeleteRecords on real logs and a real replica manager (Kafka's {@code deleteRecordsOnLeader} and
 * {@code DelayedDeleteRecords}): a second broker in the ISR never fetches by itself, the test reports its fetches,
 * and a {@link MockTimer} drives the request timeouts.
 */
@ExtendWith(LeakDetection.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DeleteRecordsHandlerTest {

    @TempDir
    static Path dir;
    private static PartitionsFixture fixture;
    private static MockTimer timer;
    private static PartitionPurgatory purgatory;
    private static DeleteRecordsHandler handler;

    @BeforeAll
    static void start() throws Exception {
        fixture = PartitionsFixture.start(dir);
        timer = new MockTimer();
        purgatory = new PartitionPurgatory(fixture.replicaManager(), timer);
        handler = new DeleteRecordsHandler(new DeleteRecordsService(fixture.replicaManager(), fixture.metadata().node(),
                purgatory));
        fixture.registerSecondBroker();
    }

    @AfterAll
    static void stop() {
        purgatory.close();
        fixture.close();
    }

    private static CompletableFuture<DeleteRecordsResponseData> delete(String topic, int timeoutMs, long... offsets) {
        DeleteRecordsTopic t = new DeleteRecordsTopic().setName(topic);
        for (int i = 0; i < offsets.length; i++) {
            t.partitions().add(new DeleteRecordsPartition().setPartitionIndex(i).setOffset(offsets[i]));
        }
        DeleteRecordsRequestData request = new DeleteRecordsRequestData().setTimeoutMs(timeoutMs);
        request.topics().add(t);
        return handler.handle(MetadataFixture.context(ApiKey.DELETE_RECORDS, 2), request).toCompletableFuture();
    }

    private static DeleteRecordsPartitionResult only(CompletableFuture<DeleteRecordsResponseData> response)
            throws Exception {
        return response.get(10, TimeUnit.SECONDS).topics().get(0).partitions().get(0);
    }

    private static Partition awaitLeader(String topic) {
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> fixture.replicaManager()
                .partition(new TopicPartition(topic, 0)).map(Partition::isLeader).orElse(false));
        return fixture.partition(topic, 0);
    }

    @Test
    void deletesUpToTheOffsetOrTheHighWatermarkAndRefusesBeyondIt() throws Exception {
        // Given
        fixture.createTopicOn("single", new ArrayList<>(List.of(1)));
        Partition partition = fixture.partition("single", 0);
        fixture.append("single", 0, 1L, 2L, 3L, 4L, 5L);

        // When
        DeleteRecordsPartitionResult toThree = only(delete("single", 30_000, 3));
        DeleteRecordsPartitionResult back = only(delete("single", 30_000, 1));
        DeleteRecordsPartitionResult beyond = only(delete("single", 30_000, 6));
        DeleteRecordsPartitionResult negative = only(delete("single", 30_000, -2));
        DeleteRecordsPartitionResult toHw = only(delete("single", 30_000, -1));

        // Then: the log start never moves down, and -1 is the high watermark.
        assertThat(toThree.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(toThree.lowWatermark()).isEqualTo(3);
        assertThat(back.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(back.lowWatermark()).isEqualTo(3);
        assertThat(beyond.errorCode()).isEqualTo(Errors.OFFSET_OUT_OF_RANGE.code());
        assertThat(beyond.lowWatermark()).isEqualTo(-1);
        assertThat(negative.errorCode()).isEqualTo(Errors.OFFSET_OUT_OF_RANGE.code());
        assertThat(toHw.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(toHw.lowWatermark()).isEqualTo(5);
        assertThat(partition.logStartOffset()).isEqualTo(5);
    }

    @Test
    void unknownPartitionsInternalAndCompactedTopicsGetKafkasErrors() throws Exception {
        // Given
        CreatableTopic compacted = new CreatableTopic().setName("compacted").setNumPartitions(-1)
                .setReplicationFactor((short) -1);
        compacted.assignments().add(new CreatableReplicaAssignment().setPartitionIndex(0)
                .setBrokerIds(new ArrayList<>(List.of(1))));
        compacted.configs().add(new CreatableTopicConfig().setName("cleanup.policy").setValue("compact"));
        CreateTopicsRequestData create = new CreateTopicsRequestData();
        create.topics().add(compacted);
        fixture.metadata().node().createTopics(create).get(30, TimeUnit.SECONDS);
        awaitLeader("compacted");

        // When / Then
        assertThat(only(delete("compacted", 30_000, 0)).errorCode()).isEqualTo(Errors.POLICY_VIOLATION.code());
        assertThat(only(delete("missing", 30_000, 1)).errorCode())
                .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        DeleteRecordsPartitionResult second = delete("compacted", 30_000, 0, 0).get(10, TimeUnit.SECONDS)
                .topics().get(0).partitions().get(1);
        assertThat(second.errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        assertThat(second.lowWatermark()).isEqualTo(-1);
    }

    @Test
    void waitsUntilTheFollowerReportsTheNewLogStartOffset() throws Exception {
        // Given: the follower has every record, so the high watermark is 4.
        fixture.createTopicOn("replicated", new ArrayList<>(List.of(1, 2)));
        Partition partition = fixture.partition("replicated", 0);
        fixture.append("replicated", 0, 1L, 2L, 3L, 4L);
        partition.updateFollowerFetchState(2, 4, 0L, 0L, partition.logEndOffset());
        CompletableFuture<DeleteRecordsResponseData> waiting = delete("replicated", 30_000, 2);
        assertThat(waiting).isNotDone();
        assertThat(partition.logStartOffset()).isEqualTo(2);

        // When: the follower's next fetch carries its own log start offset, moved up from the fetch response.
        partition.updateFollowerFetchState(2, 4, 2L, 0L, partition.logEndOffset());

        // Then: answered without the timer moving, and gone from the purgatory.
        DeleteRecordsPartitionResult result = only(waiting);
        assertThat(result.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(result.lowWatermark()).isEqualTo(2);
        assertThat(purgatory.pendingCount()).isZero();
    }

    @Test
    void deletingTheTopicAnswersAWaitingRequestAtOnce() throws Exception {
        // Given
        fixture.createTopicOn("doomed", new ArrayList<>(List.of(1, 2)));
        Partition partition = fixture.partition("doomed", 0);
        fixture.append("doomed", 0, 1L, 2L);
        partition.updateFollowerFetchState(2, 2, 0L, 0L, partition.logEndOffset());
        CompletableFuture<DeleteRecordsResponseData> waiting = delete("doomed", 30_000, 1);
        assertThat(waiting).isNotDone();

        // When
        fixture.metadata().node().deleteTopics(new DeleteTopicsRequestData().setTopicNames(List.of("doomed")))
                .get(30, TimeUnit.SECONDS);

        // Then: without the timer moving.
        DeleteRecordsPartitionResult result = only(waiting);
        assertThat(result.errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        assertThat(result.lowWatermark()).isEqualTo(-1);
    }

    @Test
    void aFollowerThatNeverCatchesUpTimesTheRequestOut() throws Exception {
        // Given
        fixture.createTopicOn("stuck", new ArrayList<>(List.of(1, 2)));
        Partition partition = fixture.partition("stuck", 0);
        fixture.append("stuck", 0, 1L, 2L);
        partition.updateFollowerFetchState(2, 2, 0L, 0L, partition.logEndOffset());
        CompletableFuture<DeleteRecordsResponseData> waiting = delete("stuck", 500, 1);
        timer.advance(499);
        assertThat(waiting).isNotDone();

        // When
        timer.advance(1);

        // Then: the low watermark is the follower's start offset when the request was taken.
        DeleteRecordsPartitionResult result = only(waiting);
        assertThat(result.errorCode()).isEqualTo(Errors.REQUEST_TIMED_OUT.code());
        assertThat(result.lowWatermark()).isZero();
        assertThat(purgatory.pendingCount()).isZero();
        assertThat(timer.size()).isZero();
    }
}
