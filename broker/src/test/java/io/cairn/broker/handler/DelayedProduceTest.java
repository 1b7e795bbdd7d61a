package io.cairn.broker.handler;

import io.micrometer.core.instrument.Clock;
import io.cairn.broker.produce.ProduceService;
import io.cairn.broker.metrics.BrokerMetrics;
import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.purgatory.MockTimer;
import io.cairn.broker.purgatory.PartitionPurgatory;
import io.cairn.isr.Partition;
import io.cairn.testkit.LeakDetection;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.DeleteTopicsRequestData;
import io.cairn.wire.message.ProduceRequestData;
import io.cairn.wire.message.ProduceRequestData.PartitionProduceData;
import io.cairn.wire.message.ProduceRequestData.TopicProduceData;
import io.cairn.wire.message.ProduceResponseData;
import io.cairn.wire.message.ProduceResponseData.PartitionProduceResponse;
import io.cairn.wire.record.CompressionType;
import io.cairn.wire.record.RecordBatchBuilder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Produce with acks=all on partitions whose ISR holds a second broker that never fetches by itself: the high
 * watermark stays behind until the test reports the follower's position, and the request's timeout, driven on a
 * {@link MockTimer}, decides otherwise (Kafka's {@code DelayedProduce} in the purgatory).
 */
@ExtendWith(LeakDetection.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DelayedProduceTest {

    @TempDir
    static Path dir;
    private static PartitionsFixture fixture;
    private static MockTimer timer;
    private static PartitionPurgatory purgatory;
    private static ProduceHandler handler;

    @BeforeAll
    static void start() throws Exception {
        fixture = PartitionsFixture.start(dir);
        timer = new MockTimer();
        purgatory = new PartitionPurgatory(fixture.replicaManager(), timer);
        handler = new ProduceHandler(new ProduceService(fixture.replicaManager(), fixture.metadata().node(), purgatory,
                BrokerMetrics.withClock(Clock.SYSTEM).topics(), null, Runnable::run));
        fixture.registerSecondBroker();
    }

    @AfterAll
    static void stop() {
        purgatory.close();
        fixture.close();
    }

    private static CompletableFuture<ProduceResponseData> produce(ProduceRequestData request) throws Exception {
        TwoPhaseApiHandler.Stages<ProduceResponseData> stages = handler.dispatch(
                MetadataFixture.context(ApiKey.PRODUCE, 9), request);
        stages.dispatched().toCompletableFuture().get(10, TimeUnit.SECONDS);
        return stages.response().toCompletableFuture();
    }

    private static ProduceRequestData request(String topic, short acks, int timeoutMs, int records) {
        RecordBatchBuilder builder = new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, CompressionType.NONE);
        for (int i = 0; i < records; i++) {
            builder.append(System.currentTimeMillis(), new byte[] {(byte) i}, new byte[] {(byte) i});
        }
        ByteBuf batch = builder.build();
        ProduceRequestData request = new ProduceRequestData().setAcks(acks).setTimeoutMs(timeoutMs);
        request.topicData().add(new TopicProduceData().setName(topic).setPartitionData(new ArrayList<>(
                List.of(new PartitionProduceData().setIndex(0).setRecords(batch)))));
        return request;
    }

    private static PartitionProduceResponse only(CompletableFuture<ProduceResponseData> response) throws Exception {
        return response.get(10, TimeUnit.SECONDS).responses().get(0).partitionResponses().get(0);
    }

    @Test
    void acksAllWaitsForTheIsrAndTimesOutWithTheOffsetsOfTheAppend() throws Exception {
        // Given: broker 2 is in the ISR of a partition led by broker 1 but never fetches, so the HW stays behind.
        fixture.createTopicOn("replicated", new ArrayList<>(List.of(1, 2)));
        PartitionProduceResponse leaderOnly = only(produce(request("replicated", (short) 1, 30_000, 2)));
        CompletableFuture<ProduceResponseData> acksAll = produce(request("replicated", (short) -1, 200, 3));
        timer.advance(199);
        assertThat(acksAll).isNotDone();

        // When
        timer.advance(1);

        // Then
        PartitionProduceResponse response = only(acksAll);
        assertThat(leaderOnly.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(response.errorCode()).isEqualTo(Errors.REQUEST_TIMED_OUT.code());
        assertThat(response.baseOffset()).isEqualTo(2);
        assertThat(response.logStartOffset()).isZero();
        assertThat(partition("replicated").logEndOffset()).isEqualTo(5);
        assertThat(partition("replicated").highWatermark()).isZero();
    }

    @Test
    void acksAllWaitersThatTimeOutLeaveNothingBehind() throws Exception {
        // Given: many acks=all requests on a partition whose follower never catches up.
        fixture.createTopicOn("leak", new ArrayList<>(List.of(1, 2)));
        List<CompletableFuture<ProduceResponseData>> waiting = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            waiting.add(produce(request("leak", (short) -1, 1_000, 1)));
        }
        assertThat(purgatory.pendingCount()).isEqualTo(200);

        // When
        timer.advance(1_000);

        // Then: each answered REQUEST_TIMED_OUT and none is still watched, timed or kept for a later HW move.
        for (CompletableFuture<ProduceResponseData> response : waiting) {
            assertThat(only(response).errorCode()).isEqualTo(Errors.REQUEST_TIMED_OUT.code());
        }
        assertThat(purgatory.pendingCount()).isZero();
        assertThat(purgatory.watchedKeyCount()).isZero();
        assertThat(timer.size()).isZero();
        partition("leak").updateFollowerFetchState(2, 200, -1L, 0L, partition("leak").logEndOffset());
        assertThat(partition("leak").highWatermark()).isEqualTo(200);
        assertThat(purgatory.pendingCount()).isZero();
    }

    @Test
    void acksAllCompletesWhenTheFollowerReportsItHasTheRecords() throws Exception {
        // Given
        fixture.createTopicOn("caughtup", new ArrayList<>(List.of(1, 2)));
        CompletableFuture<ProduceResponseData> acksAll = produce(request("caughtup", (short) -1, 30_000, 4));
        partition("caughtup").updateFollowerFetchState(2, 3, -1L, 0L, partition("caughtup").logEndOffset());
        assertThat(acksAll).isNotDone();

        // When
        partition("caughtup").updateFollowerFetchState(2, 4, -1L, 0L, partition("caughtup").logEndOffset());

        // Then: answered at once, without the timer moving, and gone from the purgatory and the timer.
        PartitionProduceResponse response = only(acksAll);
        assertThat(response.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(response.baseOffset()).isZero();
        assertThat(purgatory.pendingCount()).isZero();
        assertThat(timer.size()).isZero();
    }

    @Test
    void deletingThePartitionAnswersItsAcksAllWaitersAtOnceWithNotLeader() throws Exception {
        // Given
        fixture.createTopicOn("doomed", new ArrayList<>(List.of(1, 2)));
        CompletableFuture<ProduceResponseData> acksAll = produce(request("doomed", (short) -1, 30_000, 1));
        assertThat(acksAll).isNotDone();

        // When
        fixture.metadata().node().deleteTopics(new DeleteTopicsRequestData().setTopicNames(List.of("doomed")))
                .get(30, TimeUnit.SECONDS);

        // Then: without the timer moving.
        assertThat(only(acksAll).errorCode()).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER.code());
        assertThat(purgatory.pendingCount()).isZero();
    }

    private static Partition partition(String topic) {
        return fixture.partition(topic, 0);
    }
}
