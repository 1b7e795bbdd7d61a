package io.cairn.broker.handler;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.isr.Partition;
import io.cairn.testkit.LeakDetection;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
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
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Produce with acks=all on a partition whose ISR holds a second broker that never fetches: the high watermark
 * stays behind, so the request's timeout decides (Kafka's {@code DelayedProduce} expiry).
 */
@ExtendWith(LeakDetection.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ProduceAcksTest {

    @TempDir
    static Path dir;
    private static PartitionsFixture fixture;
    private static ProduceHandler handler;

    @BeforeAll
    static void start() throws Exception {
        fixture = PartitionsFixture.start(dir);
        handler = new ProduceHandler(fixture.replicaManager(), fixture.metadata().node());
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    private static ProduceResponseData produce(ProduceRequestData request) throws Exception {
        TwoPhaseApiHandler.Stages<ProduceResponseData> stages = handler.dispatch(
                MetadataFixture.context(ApiKey.PRODUCE, 9), request);
        stages.dispatched().toCompletableFuture().get(10, TimeUnit.SECONDS);
        return stages.response().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    private static ProduceRequestData request(short acks, int timeoutMs, int records) {
        RecordBatchBuilder builder = new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, CompressionType.NONE);
        for (int i = 0; i < records; i++) {
            builder.append(System.currentTimeMillis(), new byte[] {(byte) i}, new byte[] {(byte) i});
        }
        ByteBuf batch = builder.build();
        ProduceRequestData request = new ProduceRequestData().setAcks(acks).setTimeoutMs(timeoutMs);
        request.topicData().add(new TopicProduceData().setName("replicated").setPartitionData(new ArrayList<>(
                List.of(new PartitionProduceData().setIndex(0).setRecords(batch)))));
        return request;
    }

    private static PartitionProduceResponse only(ProduceResponseData response) {
        return response.responses().get(0).partitionResponses().get(0);
    }

    @Test
    void acksAllWaitsForTheIsrAndTimesOutWithTheOffsetsOfTheAppend() throws Exception {
        // Given: broker 2 is in the ISR of a partition led by broker 1 but never fetches, so the HW stays behind.
        fixture.registerSecondBroker();
        fixture.createTopicOn("replicated", new ArrayList<>(List.of(1, 2)));
        PartitionProduceResponse leaderOnly = only(produce(request((short) 1, 30_000, 2)));
        ProduceRequestData acksAll = request((short) -1, 200, 3);

        // When
        long start = System.nanoTime();
        PartitionProduceResponse response = only(produce(acksAll));
        long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        // Then
        assertThat(leaderOnly.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(response.errorCode()).isEqualTo(Errors.REQUEST_TIMED_OUT.code());
        assertThat(response.baseOffset()).isEqualTo(2);
        assertThat(response.logStartOffset()).isZero();
        assertThat(elapsedMs).isGreaterThanOrEqualTo(200);
        assertThat(replicated().logEndOffset()).isEqualTo(5);
        assertThat(replicated().highWatermark()).isZero();
    }

    private static Partition replicated() {
        return fixture.partition("replicated", 0);
    }
}
