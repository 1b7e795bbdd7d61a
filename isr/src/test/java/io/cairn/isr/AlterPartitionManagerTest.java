package io.cairn.isr;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AlterPartitionRequestData;
import io.cairn.wire.message.AlterPartitionResponseData;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class AlterPartitionManagerTest {

    private static final Uuid TOPIC = new Uuid(3L, 4L);

    private final IsrHarness world = new IsrHarness(1, 30_000L, 1, 2);

    private static LeaderAndIsr proposal(int partitionEpoch) {
        return new LeaderAndIsr(1, 5, List.of(new LeaderAndIsr.Member(1, 11L)), partitionEpoch);
    }

    private static AlterPartitionResponseData answer(Errors topLevel, int... partitions) {
        AlterPartitionResponseData.TopicData topic = new AlterPartitionResponseData.TopicData().setTopicId(TOPIC);
        for (int partition : partitions) {
            topic.partitions().add(new AlterPartitionResponseData.PartitionData().setPartitionIndex(partition)
                .setLeaderId(1).setLeaderEpoch(5).setIsr(new ArrayList<>(List.of(1))).setPartitionEpoch(8));
        }
        return new AlterPartitionResponseData().setErrorCode(topLevel.code())
            .setTopics(new ArrayList<>(List.of(topic)));
    }

    @Test
    void proposalsQueuedWhileARequestIsInFlightGoOutTogetherInTheNextOne() {
        // Given
        CompletableFuture<LeaderAndIsr> first = world.manager.submit(new TopicPartition("t", 0), TOPIC, proposal(7));
        Map.Entry<AlterPartitionRequestData, CompletableFuture<AlterPartitionResponseData>> one = world.nextSent();
        CompletableFuture<LeaderAndIsr> second = world.manager.submit(new TopicPartition("t", 1), TOPIC, proposal(7));
        CompletableFuture<LeaderAndIsr> third = world.manager.submit(new TopicPartition("t", 2), TOPIC, proposal(7));
        assertThat(world.nextSent()).as("one request in flight at a time").isNull();

        // When
        one.getValue().complete(answer(Errors.NONE, 0));
        Map.Entry<AlterPartitionRequestData, CompletableFuture<AlterPartitionResponseData>> two = world.nextSent();

        // Then
        assertThat(first).isCompletedWithValue(LeaderAndIsr.of(1, 5, List.of(1), 8));
        assertThat(two.getKey().brokerId()).isEqualTo(1);
        assertThat(two.getKey().brokerEpoch()).isEqualTo(11L);
        assertThat(two.getKey().topics()).hasSize(1);
        assertThat(two.getKey().topics().get(0).partitions()).extracting(p -> p.partitionIndex())
            .containsExactly(1, 2);
        assertThat(two.getKey().topics().get(0).partitions().get(0).newIsrWithEpochs().get(0).brokerEpoch())
            .isEqualTo(11L);
        two.getValue().complete(answer(Errors.NONE, 1, 2));
        world.scheduler.runPending();
        assertThat(second).isCompleted();
        assertThat(third).isCompleted();
        assertThat(world.manager.pendingCount()).isZero();
    }

    @Test
    void aSecondProposalForAQueuedPartitionIsNotAttempted() {
        // Given
        world.manager.submit(new TopicPartition("t", 0), TOPIC, proposal(7));

        // When
        CompletableFuture<LeaderAndIsr> again = world.manager.submit(new TopicPartition("t", 0), TOPIC, proposal(7));

        // Then
        assertThat(again).isCompletedExceptionally();
        assertThat(Errors.forException(again.handle((v, e) -> e).join())).isEqualTo(Errors.OPERATION_NOT_ATTEMPTED);
    }

    @Test
    void aTopLevelErrorOrAFailedSendRetriesTheBatchAfterTheBackoff() {
        // Given
        CompletableFuture<LeaderAndIsr> future = world.manager.submit(new TopicPartition("t", 0), TOPIC,
            proposal(7));

        // When
        world.nextSent().getValue().complete(answer(Errors.STALE_BROKER_EPOCH));
        world.scheduler.runPending();

        // Then
        assertThat(world.nextSent()).as("not before the backoff").isNull();
        world.scheduler.advance(AlterPartitionManager.RETRY_BACKOFF_MS);
        world.nextSent().getValue().completeExceptionally(Errors.NOT_CONTROLLER.exception());
        world.scheduler.runPending();
        world.scheduler.advance(AlterPartitionManager.RETRY_BACKOFF_MS);
        world.nextSent().getValue().complete(answer(Errors.NONE, 0));
        world.scheduler.runPending();
        assertThat(future).isCompleted();
    }

    @Test
    void aPartitionErrorFailsOnlyThatPartitionAndAMissingOneIsSentAgain() {
        // Given
        CompletableFuture<LeaderAndIsr> failed = world.manager.submit(new TopicPartition("t", 0), TOPIC,
            proposal(7));
        CompletableFuture<LeaderAndIsr> missing = world.manager.submit(new TopicPartition("t", 1), TOPIC,
            proposal(7));
        Map.Entry<AlterPartitionRequestData, CompletableFuture<AlterPartitionResponseData>> request =
            world.nextSent();
        AlterPartitionResponseData response = answer(Errors.NONE);
        response.topics().get(0).partitions().add(new AlterPartitionResponseData.PartitionData().setPartitionIndex(0)
            .setErrorCode(Errors.INVALID_UPDATE_VERSION.code()));

        // When
        request.getValue().complete(response);
        Map.Entry<AlterPartitionRequestData, CompletableFuture<AlterPartitionResponseData>> again = world.nextSent();

        // Then
        assertThat(Errors.forException(failed.handle((v, e) -> e).join())).isEqualTo(Errors.INVALID_UPDATE_VERSION);
        assertThat(missing).isNotDone();
        assertThat(again.getKey().topics().get(0).partitions()).extracting(p -> p.partitionIndex())
            .containsExactly(1);
    }
}
