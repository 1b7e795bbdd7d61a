package io.cairn.broker.handler;

import io.cairn.broker.produce.ProduceService;
import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.wire.error.Errors;
import io.cairn.wire.message.FetchResponseData;
import io.cairn.wire.message.ProduceResponseData;
import io.cairn.wire.message.ProduceResponseData.PartitionProduceResponse;
import io.cairn.wire.message.ProduceResponseData.TopicProduceResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The error codes a response reports to the request error metrics, as Kafka's {@code errorCounts} does. */
class ErrorCountsTest {

    private final List<Short> counted = new ArrayList<>();

    @Test
    void produceShouldCountOneCodePerPartition() {
        // Given
        ProduceResponseData response = new ProduceResponseData();
        TopicProduceResponse topic = new TopicProduceResponse().setName("t");
        topic.partitionResponses().add(new PartitionProduceResponse().setIndex(0));
        topic.partitionResponses().add(new PartitionProduceResponse().setIndex(1)
                .setErrorCode(Errors.NOT_LEADER_OR_FOLLOWER.code()));
        response.responses().add(topic);

        // When
        new ProduceHandler(new ProduceService(null, null, null, null, null, Runnable::run)).countErrors(response, counted::add);

        // Then
        assertThat(counted).containsExactly(Errors.NONE.code(), Errors.NOT_LEADER_OR_FOLLOWER.code());
    }

    @Test
    void fetchShouldCountTheTopLevelCodeThenOnePerPartition() {
        // Given
        FetchResponseData response = new FetchResponseData();
        FetchResponseData.FetchableTopicResponse topic = new FetchResponseData.FetchableTopicResponse();
        topic.partitions().add(new FetchResponseData.PartitionData().setPartitionIndex(0)
                .setErrorCode(Errors.OFFSET_OUT_OF_RANGE.code()));
        response.responses().add(topic);

        // When
        new FetchHandler(null).countErrors(response, counted::add);

        // Then
        assertThat(counted).containsExactly(Errors.NONE.code(), Errors.OFFSET_OUT_OF_RANGE.code());
    }

    @Test
    void otherApisShouldCountOneNonePerResponse() {
        // When
        new ListGroupsHandler(null).countErrors(null, counted::add);

        // Then
        assertThat(counted).containsExactly(Errors.NONE.code());
    }
}
