package io.cairn.broker.handler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.broker.fetch.FetchResponses;
import io.cairn.testkit.LeakDetection;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.DeleteTopicsRequestData;
import io.cairn.wire.message.FetchRequestData;
import io.cairn.wire.message.FetchResponseData;
import io.cairn.wire.message.FetchResponseData.PartitionData;
import io.cairn.wire.protocol.Uuid;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** Fetch against real partitions of a real metadata node: records, offsets, errors, limits and the long poll. */
@ExtendWith(LeakDetection.class)
@Timeout(120)
class FetchHandlerTest {

    @TempDir
    static Path dir;

    private static FetchFixture fixture;

    @BeforeAll
    static void start() throws Exception {
        fixture = FetchFixture.start(dir);
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    private static FetchResponseData get(CompletableFuture<FetchResponseData> future) throws Exception {
        return future.get(30, TimeUnit.SECONDS);
    }

    private static PartitionData only(FetchResponseData response) {
        assertThat(response.responses()).hasSize(1);
        assertThat(response.responses().get(0).partitions()).hasSize(1);
        return response.responses().get(0).partitions().get(0);
    }

    @Test
    void aFetchReturnsTheRecordsAndTheOffsetsOfThePartition() throws Exception {
        // Given
        Uuid id = fixture.createTopic("plain", 1);
        fixture.append("plain", 0, "a", 3);
        fixture.append("plain", 0, "b", 2);

        // When
        FetchResponseData response = get(fixture.fetch(12, FetchFixture.request(12, "plain", id, 0, 0, 0)));

        // Then
        try {
            PartitionData p = only(response);
            assertThat(response.responses().get(0).topic()).isEqualTo("plain");
            assertThat(p.errorCode()).isEqualTo(Errors.NONE.code());
            assertThat(p.highWatermark()).isEqualTo(5);
            assertThat(p.lastStableOffset()).isEqualTo(5);
            assertThat(p.logStartOffset()).isZero();
            assertThat(p.abortedTransactions()).isNull();
            assertThat(p.preferredReadReplica()).isEqualTo(-1);
            assertThat(FetchFixture.values(p)).containsExactly("a-0", "a-1", "a-2", "b-0", "b-1");
        } finally {
            FetchResponses.release(response);
        }
    }

    @Test
    void aFetchOffsetInsideABatchReturnsTheWholeBatch() throws Exception {
        // Given
        Uuid id = fixture.createTopic("inside", 1);
        fixture.append("inside", 0, "a", 4);
        fixture.append("inside", 0, "b", 4);

        // When
        FetchResponseData response = get(fixture.fetch(18, FetchFixture.request(18, "inside", id, 0, 6, 0)));

        // Then
        try {
            PartitionData p = only(response);
            assertThat(response.responses().get(0).topicId()).isEqualTo(id);
            assertThat(FetchFixture.baseOffsets(p)).containsExactly(4L);
            assertThat(FetchFixture.values(p)).containsExactly("b-0", "b-1", "b-2", "b-3");
        } finally {
            FetchResponses.release(response);
        }
    }

    @Test
    void anOffsetBeyondTheLogEndIsOutOfRange() throws Exception {
        // Given
        Uuid id = fixture.createTopic("range", 1);
        fixture.append("range", 0, "a", 2);

        // When
        FetchResponseData response = get(fixture.fetch(15, FetchFixture.request(15, "range", id, 0, 3, 500)));

        // Then
        PartitionData p = only(response);
        assertThat(p.errorCode()).isEqualTo(Errors.OFFSET_OUT_OF_RANGE.code());
        assertThat(p.highWatermark()).isEqualTo(-1);
        assertThat(p.records().readableBytes()).isZero();
    }

    @Test
    void anUnknownTopicIdIsAnsweredWithUnknownTopicId() throws Exception {
        // Given
        Uuid unknown = new Uuid(42, 42);

        // When
        FetchResponseData response = get(fixture.fetch(13, FetchFixture.request(13, null, unknown, 0, 0, 0)));

        // Then
        assertThat(response.responses().get(0).topicId()).isEqualTo(unknown);
        assertThat(only(response).errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_ID.code());
    }

    @Test
    void anUnknownTopicNameIsAnsweredWithUnknownTopicOrPartition() throws Exception {
        // When
        FetchResponseData response = get(fixture.fetch(12, FetchFixture.request(12, "nope", null, 0, 0, 0)));

        // Then
        assertThat(only(response).errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
    }

    @Test
    void aNewerLeaderEpochThanTheBrokerKnowsIsUnknownLeaderEpoch() throws Exception {
        // Given
        Uuid id = fixture.createTopic("epochs", 1);
        int epoch = fixture.partition("epochs", 0).leaderEpoch();
        FetchRequestData newer = FetchFixture.request(16, "epochs", id, 0, 0, 0);
        newer.topics().get(0).partitions().get(0).setCurrentLeaderEpoch(epoch + 1);

        // When
        FetchResponseData response = get(fixture.fetch(16, newer));

        // Then
        PartitionData unknown = only(response);
        assertThat(unknown.errorCode()).isEqualTo(Errors.UNKNOWN_LEADER_EPOCH.code());
        assertThat(unknown.currentLeader().leaderId()).isEqualTo(-1);
        assertThat(response.nodeEndpoints()).isEmpty();
    }

    @Test
    void theFirstBatchIsReturnedWholeEvenAboveTheLimitsButNothingFollowsIt() throws Exception {
        // Given
        Uuid id = fixture.createTopic("limits", 2);
        fixture.append("limits", 0, "a", 50);
        fixture.append("limits", 0, "b", 50);
        fixture.append("limits", 1, "c", 50);
        FetchRequestData request = FetchFixture.request(12, "limits", id, 0, 0, 0).setMaxBytes(10);
        request.topics().get(0).partitions().add(new FetchRequestData.FetchPartition().setPartition(1)
            .setFetchOffset(0).setPartitionMaxBytes(1024 * 1024).setCurrentLeaderEpoch(-1));

        // When
        FetchResponseData response = get(fixture.fetch(12, request));

        // Then
        try {
            PartitionData first = response.responses().get(0).partitions().get(0);
            PartitionData second = response.responses().get(0).partitions().get(1);
            assertThat(FetchFixture.values(first)).hasSize(50).startsWith("a-0");
            assertThat(second.records().readableBytes()).isZero();
            assertThat(second.highWatermark()).isEqualTo(50);
        } finally {
            FetchResponses.release(response);
        }
    }

    @Test
    void aReadCommittedFetchKeepsTheResponseBudgetAfterTheFirstPartitionWithData() throws Exception {
        // Given: three partitions with data, a response limit below one batch, read_committed (librdkafka's default).
        Uuid id = fixture.createTopic("committed-limits", 3);
        fixture.append("committed-limits", 0, "a", 50);
        fixture.append("committed-limits", 1, "b", 50);
        fixture.append("committed-limits", 2, "c", 50);
        FetchRequestData request = FetchFixture.request(12, "committed-limits", id, 0, 0, 0).setMaxBytes(10)
            .setIsolationLevel((byte) 1);
        for (int partition = 1; partition < 3; partition++) {
            request.topics().get(0).partitions().add(new FetchRequestData.FetchPartition().setPartition(partition)
                .setFetchOffset(0).setPartitionMaxBytes(1024 * 1024).setCurrentLeaderEpoch(-1));
        }

        // When
        FetchResponseData response = get(fixture.fetch(12, request));

        // Then: only the first partition exceeds the budget (KIP-74); the others answer their offsets, no records.
        try {
            List<PartitionData> partitions = response.responses().get(0).partitions();
            assertThat(FetchFixture.values(partitions.get(0))).hasSize(50).startsWith("a-0");
            for (PartitionData later : partitions.subList(1, 3)) {
                assertThat(later.errorCode()).isEqualTo(Errors.NONE.code());
                assertThat(later.records().readableBytes()).isZero();
                assertThat(later.highWatermark()).isEqualTo(50);
                assertThat(later.lastStableOffset()).isEqualTo(50);
            }
        } finally {
            FetchResponses.release(response);
        }
    }

    @Test
    void aPartitionLimitEndsThePartitionAfterTheFirstBatch() throws Exception {
        // Given
        Uuid id = fixture.createTopic("partlimit", 1);
        fixture.append("partlimit", 0, "a", 10);
        fixture.append("partlimit", 0, "b", 10);
        FetchRequestData request = FetchFixture.request(12, "partlimit", id, 0, 0, 0);
        request.topics().get(0).partitions().get(0).setPartitionMaxBytes(1);

        // When
        FetchResponseData response = get(fixture.fetch(12, request));

        // Then
        try {
            assertThat(FetchFixture.values(only(response))).hasSize(10).startsWith("a-0");
        } finally {
            FetchResponses.release(response);
        }
    }

    @Test
    void aConsumerAtTheLogEndWaitsAndWakesOnTheNextAppend() throws Exception {
        // Given
        Uuid id = fixture.createTopic("longpoll", 1);
        fixture.append("longpoll", 0, "a", 1);
        CompletableFuture<FetchResponseData> waiting = fixture.fetch(17,
            FetchFixture.request(17, "longpoll", id, 0, 1, 60_000));
        assertThat(waiting).isNotDone();
        assertThat(fixture.service().waitingFetches()).isPositive();

        // When
        long start = System.nanoTime();
        fixture.append("longpoll", 0, "b", 1);

        // Then
        FetchResponseData response = get(waiting);
        try {
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
            assertThat(FetchFixture.values(only(response))).containsExactly("b-0");
            assertThat(only(response).highWatermark()).isEqualTo(2);
        } finally {
            FetchResponses.release(response);
        }
    }

    @Test
    void aLongPollWithoutDataAnswersEmptyWhenMaxWaitRunsOut() throws Exception {
        // Given
        Uuid id = fixture.createTopic("timeout", 1);
        long start = System.nanoTime();

        // When
        CompletableFuture<FetchResponseData> waiting = fixture.fetch(17,
            FetchFixture.request(17, "timeout", id, 0, 0, 300));

        // Then
        await().atMost(Duration.ofSeconds(10)).until(waiting::isDone);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(250));
        PartitionData p = only(get(waiting));
        assertThat(p.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(p.records().readableBytes()).isZero();
        assertThat(p.highWatermark()).isZero();
    }

    @Test
    void aReadCommittedFetchReportsTheLastStableOffsetAndAnAbortedTransactionsList() throws Exception {
        // Given
        Uuid id = fixture.createTopic("committed", 1);
        fixture.append("committed", 0, "a", 2);
        FetchRequestData request = FetchFixture.request(12, "committed", id, 0, 0, 0).setIsolationLevel((byte) 1);

        // When
        FetchResponseData response = get(fixture.fetch(12, request));

        // Then
        try {
            PartitionData p = only(response);
            assertThat(p.lastStableOffset()).isEqualTo(2);
            assertThat(p.abortedTransactions()).isNotNull().isEmpty();
            assertThat(FetchFixture.values(p)).containsExactly("a-0", "a-1");
        } finally {
            FetchResponses.release(response);
        }
    }

    @Test
    void aFetchWaitsUntilAppendsBringMinBytes() throws Exception {
        // Given
        Uuid id = fixture.createTopic("minbytes", 1);
        fixture.append("minbytes", 0, "a", 1);
        long oneBatch = fixture.partition("minbytes", 0).log().size();
        FetchRequestData request = FetchFixture.request(14, "minbytes", id, 0, 0, 60_000)
            .setMinBytes((int) oneBatch * 2 + 1);
        CompletableFuture<FetchResponseData> waiting = fixture.fetch(14, request);
        fixture.append("minbytes", 0, "b", 1);
        assertThat(waiting).isNotDone();

        // When
        fixture.append("minbytes", 0, "c", 1);

        // Then
        FetchResponseData response = get(waiting);
        try {
            assertThat(FetchFixture.values(only(response))).containsExactly("a-0", "b-0", "c-0");
        } finally {
            FetchResponses.release(response);
        }
    }

    @Test
    void aSessionPartitionWhoseTopicWasRecreatedIsAnsweredWithInconsistentTopicId() throws Exception {
        // Given
        Uuid oldId = fixture.createTopic("recreated", 1);
        FetchRequestData full = FetchFixture.request(13, "recreated", oldId, 0, 0, 0).setSessionEpoch(0);
        FetchResponseData created = get(fixture.fetch(13, full));
        FetchResponses.release(created);
        assertThat(created.sessionId()).isPositive();
        fixture.metadata().node().deleteTopics(new DeleteTopicsRequestData().setTopicNames(List.of("recreated")))
            .get(30, TimeUnit.SECONDS);
        Uuid newId = fixture.metadata().createTopic("recreated", 1);
        await().atMost(Duration.ofSeconds(30)).until(() -> fixture.replicas()
            .partition(new TopicPartition("recreated", 0)).map(p -> p.topicId().equals(newId) && p.isLeader())
            .orElse(false));
        FetchRequestData incremental = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0).setMinBytes(1)
            .setMaxBytes(Integer.MAX_VALUE).setSessionId(created.sessionId()).setSessionEpoch(1);

        // When
        FetchResponseData response = get(fixture.fetch(13, incremental));

        // Then
        assertThat(response.sessionId()).isEqualTo(created.sessionId());
        assertThat(response.responses().get(0).topicId()).isEqualTo(oldId);
        assertThat(only(response).errorCode()).isEqualTo(Errors.INCONSISTENT_TOPIC_ID.code());
    }

    @Test
    void anUnknownIsolationLevelFailsTheWholeRequestWithTheErrorOnEveryPartition() throws Exception {
        // Given
        FetchRequestData request = FetchFixture.request(12, "any", null, 0, 0, 0).setIsolationLevel((byte) 7);

        // When
        FetchResponseData response = get(fixture.fetch(12, request));

        // Then: Kafka's code for it, answered by the handler rather than thrown (no unexpected-error log)
        assertThat(response.errorCode()).isEqualTo(Errors.UNKNOWN_SERVER_ERROR.code());
        assertThat(only(response).errorCode()).isEqualTo(Errors.UNKNOWN_SERVER_ERROR.code());
        assertThat(response.responses().get(0).topic()).isEqualTo("any");
    }
}
