package io.cairn.broker.handler;

import static io.cairn.broker.handler.MetadataFixture.context;
import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.OffsetForLeaderEpochRequestData;
import io.cairn.wire.message.OffsetForLeaderEpochRequestData.OffsetForLeaderPartition;
import io.cairn.wire.message.OffsetForLeaderEpochRequestData.OffsetForLeaderTopic;
import io.cairn.wire.message.OffsetForLeaderEpochResponseData;
import io.cairn.wire.message.OffsetForLeaderEpochResponseData.EpochEndOffset;
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

/** OffsetForLeaderEpoch against a real metadata node, replica manager and logs, at every version served. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class OffsetForLeaderEpochHandlerTest {

    private static final String TOPIC = "epochs";

    @TempDir
    static Path dir;
    private static PartitionsFixture fixture;
    private static OffsetForLeaderEpochHandler handler;

    @BeforeAll
    static void start() throws Exception {
        fixture = PartitionsFixture.start(dir);
        fixture.createTopic(TOPIC, 1);
        fixture.append(TOPIC, 0, 1, 2, 3);
        handler = new OffsetForLeaderEpochHandler(fixture.replicaManager());
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    private static EpochEndOffset ask(int version, String topic, int partition, int currentLeaderEpoch,
                                      int leaderEpoch) throws Exception {
        OffsetForLeaderEpochRequestData request = new OffsetForLeaderEpochRequestData().setReplicaId(-1)
                .setTopics(List.of(new OffsetForLeaderTopic().setTopic(topic).setPartitions(List.of(
                        new OffsetForLeaderPartition().setPartition(partition)
                                .setCurrentLeaderEpoch(currentLeaderEpoch).setLeaderEpoch(leaderEpoch)))));
        OffsetForLeaderEpochResponseData response = handler.handle(context(ApiKey.OFFSET_FOR_LEADER_EPOCH, version),
                request).toCompletableFuture().get(10, TimeUnit.SECONDS);
        OffsetForLeaderEpochResponseData read = (OffsetForLeaderEpochResponseData) MetadataFixture.roundTrip(
                response, ApiKey.OFFSET_FOR_LEADER_EPOCH, version, true);
        assertThat(read.topics()).hasSize(1);
        assertThat(read.topics().get(0).topic()).isEqualTo(topic);
        assertThat(read.topics().get(0).partitions()).hasSize(1);
        EpochEndOffset answer = read.topics().get(0).partitions().get(0);
        assertThat(answer.partition()).isEqualTo(partition);
        return answer;
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3, 4})
    void theCurrentEpochEndsAtTheLogEndOffset(int version) throws Exception {
        // When
        EpochEndOffset answer = ask(version, TOPIC, 0, 0, 0);

        // Then
        assertThat(answer.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(answer.leaderEpoch()).isZero();
        assertThat(answer.endOffset()).isEqualTo(3L);
    }

    @Test
    void anEpochNewerThanTheHistoryIsUndefinedWithoutAnError() throws Exception {
        // When
        EpochEndOffset answer = ask(4, TOPIC, 0, -1, 5);

        // Then
        assertThat(answer.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(answer.leaderEpoch()).isEqualTo(-1);
        assertThat(answer.endOffset()).isEqualTo(-1L);
    }

    @Test
    void aCurrentLeaderEpochNewerThanTheBrokersIsUnknownLeaderEpoch() throws Exception {
        // When
        EpochEndOffset answer = ask(4, TOPIC, 0, 1, 0);

        // Then
        assertThat(answer.errorCode()).isEqualTo(Errors.UNKNOWN_LEADER_EPOCH.code());
        assertThat(answer.leaderEpoch()).isEqualTo(-1);
        assertThat(answer.endOffset()).isEqualTo(-1L);
    }

    @Test
    void anUnknownTopicOrPartitionIsUnknownTopicOrPartition() throws Exception {
        // When
        EpochEndOffset unknownTopic = ask(4, "no-such-topic", 0, -1, 0);
        EpochEndOffset unknownPartition = ask(3, TOPIC, 9, -1, 0);

        // Then
        assertThat(unknownTopic.errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        assertThat(unknownPartition.errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
    }

    @Test
    void theErrorResponseNamesEveryPartitionWithTheError() {
        // Given
        OffsetForLeaderEpochRequestData request = new OffsetForLeaderEpochRequestData().setTopics(List.of(
                new OffsetForLeaderTopic().setTopic(TOPIC).setPartitions(List.of(
                        new OffsetForLeaderPartition().setPartition(0),
                        new OffsetForLeaderPartition().setPartition(1)))));

        // When
        OffsetForLeaderEpochResponseData response = handler.errorResponse(
                context(ApiKey.OFFSET_FOR_LEADER_EPOCH, 4), request, Errors.UNKNOWN_SERVER_ERROR);

        // Then
        assertThat(response.topics().get(0).partitions()).extracting(EpochEndOffset::errorCode)
                .containsExactly(Errors.UNKNOWN_SERVER_ERROR.code(), Errors.UNKNOWN_SERVER_ERROR.code());
        assertThat(response.topics().get(0).partitions()).extracting(EpochEndOffset::endOffset)
                .containsExactly(-1L, -1L);
    }
}
