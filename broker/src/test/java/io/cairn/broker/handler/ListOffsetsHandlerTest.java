package io.cairn.broker.handler;

import static io.cairn.broker.handler.MetadataFixture.context;
import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ListOffsetsRequestData;
import io.cairn.wire.message.ListOffsetsRequestData.ListOffsetsPartition;
import io.cairn.wire.message.ListOffsetsRequestData.ListOffsetsTopic;
import io.cairn.wire.message.ListOffsetsResponseData;
import io.cairn.wire.message.ListOffsetsResponseData.ListOffsetsPartitionResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** ListOffsets against a real metadata node, replica manager and logs, at every version served. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ListOffsetsHandlerTest {

    private static final String TOPIC = "offsets";
    private static final String EMPTY = "empty";

    @TempDir
    static Path dir;
    private static PartitionsFixture fixture;
    private static ListOffsetsHandler handler;

    @BeforeAll
    static void start() throws Exception {
        fixture = PartitionsFixture.start(dir);
        fixture.createTopic(TOPIC, 2);
        fixture.createTopic(EMPTY, 1);
        fixture.append(TOPIC, 0, 1000, 3000, 2000);
        fixture.append(TOPIC, 0, 2500);
        handler = new ListOffsetsHandler(fixture.replicaManager());
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    private static ListOffsetsResponseData list(int version, ListOffsetsRequestData request) throws Exception {
        ListOffsetsResponseData response = handler.handle(context(ApiKey.LIST_OFFSETS, version), request)
                .toCompletableFuture().get(10, TimeUnit.SECONDS);
        return (ListOffsetsResponseData) MetadataFixture.roundTrip(response, ApiKey.LIST_OFFSETS, version, true);
    }

    private static ListOffsetsRequestData request(String topic, ListOffsetsPartition... partitions) {
        return new ListOffsetsRequestData().setReplicaId(-1).setTopics(List.of(new ListOffsetsTopic()
                .setName(topic).setPartitions(List.of(partitions))));
    }

    private static ListOffsetsPartition at(int partition, long timestamp) {
        return new ListOffsetsPartition().setPartitionIndex(partition).setTimestamp(timestamp);
    }

    private static ListOffsetsPartitionResponse single(int version, String topic, long timestamp) throws Exception {
        ListOffsetsResponseData response = list(version, request(topic, at(0, timestamp)));
        assertThat(response.topics()).hasSize(1);
        assertThat(response.topics().get(0).partitions()).hasSize(1);
        return response.topics().get(0).partitions().get(0);
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
    void earliestAndLatestAreTheLogStartAndTheHighWatermarkAtEveryVersion(int version) throws Exception {
        // When
        ListOffsetsPartitionResponse earliest = single(version, TOPIC, -2);
        ListOffsetsPartitionResponse latest = single(version, TOPIC, -1);

        // Then
        assertThat(earliest.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(earliest.offset()).isZero();
        assertThat(earliest.timestamp()).isEqualTo(-1L);
        assertThat(latest.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(latest.offset()).isEqualTo(4L);
        assertThat(latest.timestamp()).isEqualTo(-1L);
        assertThat(latest.leaderEpoch()).isEqualTo(version >= 4 ? 0 : -1);
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 4, 10})
    void aTimestampFindsTheFirstRecordAtOrAfterIt(int version) throws Exception {
        // When
        ListOffsetsPartitionResponse found = single(version, TOPIC, 1500);
        ListOffsetsPartitionResponse none = single(version, TOPIC, 3001);

        // Then
        assertThat(found.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(found.offset()).isEqualTo(1L);
        assertThat(found.timestamp()).isEqualTo(3000L);
        assertThat(none.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(none.offset()).isEqualTo(-1L);
        assertThat(none.timestamp()).isEqualTo(-1L);
    }

    @Test
    void maxTimestampIsTheRecordWithTheLargestTimestampFromVersionSeven() throws Exception {
        // When
        ListOffsetsPartitionResponse v7 = single(7, TOPIC, -3);
        ListOffsetsPartitionResponse v6 = single(6, TOPIC, -3);
        ListOffsetsPartitionResponse empty = single(7, EMPTY, -3);

        // Then
        assertThat(v7.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(v7.offset()).isEqualTo(1L);
        assertThat(v7.timestamp()).isEqualTo(3000L);
        assertThat(v7.leaderEpoch()).isZero();
        assertThat(v6.errorCode()).isEqualTo(Errors.UNSUPPORTED_VERSION.code());
        assertThat(empty.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(empty.offset()).isEqualTo(-1L);
    }

    @Test
    void earliestLocalIsTheLogStartFromVersionEightAndLatestTieredMinusOneFromVersionNine() throws Exception {
        // When
        ListOffsetsPartitionResponse earliestLocal = single(8, TOPIC, -4);
        ListOffsetsPartitionResponse earliestLocalV7 = single(7, TOPIC, -4);
        ListOffsetsPartitionResponse latestTiered = single(9, TOPIC, -5);
        ListOffsetsPartitionResponse latestTieredV8 = single(8, TOPIC, -5);
        ListOffsetsPartitionResponse unknownSpecial = single(10, TOPIC, -6);

        // Then
        assertThat(earliestLocal.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(earliestLocal.offset()).isZero();
        assertThat(earliestLocalV7.errorCode()).isEqualTo(Errors.UNSUPPORTED_VERSION.code());
        assertThat(latestTiered.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(latestTiered.offset()).isEqualTo(-1L);
        assertThat(latestTiered.leaderEpoch()).isEqualTo(-1);
        assertThat(latestTieredV8.errorCode()).isEqualTo(Errors.UNSUPPORTED_VERSION.code());
        assertThat(unknownSpecial.errorCode()).isEqualTo(Errors.UNSUPPORTED_VERSION.code());
    }

    @Test
    void aPartitionNamedTwiceIsAnsweredOnceWithInvalidRequestAndTheOthersNormally() throws Exception {
        // Given
        ListOffsetsRequestData request = new ListOffsetsRequestData().setReplicaId(-1).setTopics(List.of(
                new ListOffsetsTopic().setName(TOPIC).setPartitions(List.of(at(0, -1), at(1, -1))),
                new ListOffsetsTopic().setName(TOPIC).setPartitions(List.of(at(0, -2)))));

        // When
        ListOffsetsResponseData response = list(10, request);

        // Then
        assertThat(response.topics()).hasSize(1);
        List<ListOffsetsPartitionResponse> partitions = response.topics().get(0).partitions();
        assertThat(partitions).extracting(ListOffsetsPartitionResponse::partitionIndex).containsExactly(0, 1);
        assertThat(partitions.get(0).errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
        assertThat(partitions.get(0).offset()).isEqualTo(-1L);
        assertThat(partitions.get(1).errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(partitions.get(1).offset()).isZero();
    }

    @Test
    void anUnknownTopicOrPartitionIsUnknownTopicOrPartition() throws Exception {
        // When
        ListOffsetsPartitionResponse unknownTopic = single(10, "no-such-topic", -1);
        ListOffsetsResponseData unknownPartition = list(10, request(TOPIC, at(7, -1)));

        // Then
        assertThat(unknownTopic.errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        assertThat(unknownTopic.offset()).isEqualTo(-1L);
        assertThat(unknownPartition.topics().get(0).partitions().get(0).errorCode())
                .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
    }

    @Test
    void aNewerCurrentLeaderEpochIsUnknownLeaderEpochAndTheCurrentOnePasses() throws Exception {
        // When
        ListOffsetsResponseData newer = list(4, request(TOPIC, at(0, -1).setCurrentLeaderEpoch(3)));
        ListOffsetsResponseData current = list(4, request(TOPIC, at(0, -1).setCurrentLeaderEpoch(0)));

        // Then
        assertThat(newer.topics().get(0).partitions().get(0).errorCode())
                .isEqualTo(Errors.UNKNOWN_LEADER_EPOCH.code());
        assertThat(current.topics().get(0).partitions().get(0).offset()).isEqualTo(4L);
    }

    @Test
    void readCommittedConsumersAndReplicasSeeTheirOwnEnd() throws Exception {
        // When
        ListOffsetsResponseData committed = list(2, request(TOPIC, at(0, -1)).setIsolationLevel((byte) 1));
        ListOffsetsResponseData follower = list(10, request(TOPIC, at(0, 1500)).setReplicaId(1));
        ListOffsetsResponseData debugging = list(10, request(TOPIC, at(0, -1)).setReplicaId(-2));

        // Then
        assertThat(committed.topics().get(0).partitions().get(0).offset()).isEqualTo(4L);
        assertThat(follower.topics().get(0).partitions().get(0).offset()).isEqualTo(1L);
        assertThat(debugging.topics().get(0).partitions().get(0).offset()).isEqualTo(4L);
    }

    @Test
    void anUnknownIsolationLevelFailsTheWholeRequestAsKafkasParserDoes() throws Exception {
        // When
        ListOffsetsResponseData response = list(5, request(TOPIC, at(0, -1), at(1, -1)).setIsolationLevel((byte) 7));

        // Then
        assertThat(response.topics().get(0).partitions()).extracting(ListOffsetsPartitionResponse::errorCode)
                .containsExactly(Errors.UNKNOWN_SERVER_ERROR.code(), Errors.UNKNOWN_SERVER_ERROR.code());
    }

    @Test
    void theErrorResponseNamesEveryPartitionWithTheError() {
        // Given
        ListOffsetsRequestData request = request(TOPIC, at(0, -1), at(1, -2));

        // When
        ListOffsetsResponseData response = handler.errorResponse(context(ApiKey.LIST_OFFSETS, 10), request,
                Errors.UNKNOWN_SERVER_ERROR);

        // Then
        assertThat(response.topics().get(0).partitions()).extracting(ListOffsetsPartitionResponse::errorCode)
                .containsExactly(Errors.UNKNOWN_SERVER_ERROR.code(), Errors.UNKNOWN_SERVER_ERROR.code());
    }
}
