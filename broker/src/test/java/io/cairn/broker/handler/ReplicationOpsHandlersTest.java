package io.cairn.broker.handler;

import static io.cairn.broker.handler.MetadataFixture.context;
import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AlterPartitionReassignmentsRequestData;
import io.cairn.wire.message.AlterPartitionReassignmentsRequestData.ReassignablePartition;
import io.cairn.wire.message.AlterPartitionReassignmentsRequestData.ReassignableTopic;
import io.cairn.wire.message.AlterPartitionReassignmentsResponseData;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ElectLeadersRequestData;
import io.cairn.wire.message.ElectLeadersResponseData;
import io.cairn.wire.message.ListPartitionReassignmentsRequestData;
import io.cairn.wire.message.ListPartitionReassignmentsResponseData;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** ElectLeaders, AlterPartitionReassignments and ListPartitionReassignments forwarded to a real metadata node. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReplicationOpsHandlersTest {

    @TempDir
    static Path dir;
    private static MetadataFixture fixture;

    @BeforeAll
    static void startMetadata() throws Exception {
        fixture = MetadataFixture.start(dir);
        fixture.createTopic("ops", 2);
    }

    @AfterAll
    static void stopMetadata() {
        fixture.close();
    }

    private static ElectLeadersResponseData elect(int version, ElectLeadersRequestData request) throws Exception {
        ElectLeadersResponseData response = new ElectLeadersHandler(fixture.node())
                .handle(context(ApiKey.ELECT_LEADERS, version), request).toCompletableFuture()
                .get(30, TimeUnit.SECONDS);
        return (ElectLeadersResponseData) MetadataFixture.roundTrip(response, ApiKey.ELECT_LEADERS, version, true);
    }

    private static ElectLeadersRequestData electPartition(byte type, String topic, int partition) {
        List<ElectLeadersRequestData.TopicPartitions> topics = new ArrayList<>();
        topics.add(new ElectLeadersRequestData.TopicPartitions().setTopic(topic)
                .setPartitions(new ArrayList<>(List.of(partition))));
        return new ElectLeadersRequestData().setElectionType(type).setTopicPartitions(topics);
    }

    private static AlterPartitionReassignmentsResponseData reassign(int version, List<Integer> replicas)
            throws Exception {
        List<ReassignablePartition> partitions = new ArrayList<>();
        partitions.add(new ReassignablePartition().setPartitionIndex(0).setReplicas(replicas));
        List<ReassignableTopic> topics = new ArrayList<>();
        topics.add(new ReassignableTopic().setName("ops").setPartitions(partitions));
        AlterPartitionReassignmentsResponseData response = new AlterPartitionReassignmentsHandler(fixture.node())
                .handle(context(ApiKey.ALTER_PARTITION_REASSIGNMENTS, version),
                        new AlterPartitionReassignmentsRequestData().setTopics(topics))
                .toCompletableFuture().get(30, TimeUnit.SECONDS);
        return (AlterPartitionReassignmentsResponseData) MetadataFixture.roundTrip(response,
                ApiKey.ALTER_PARTITION_REASSIGNMENTS, version, true);
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2})
    void aPreferredElectionOfAPreferredLeaderIsNotNeededInEveryVersion(int version) throws Exception {
        // When
        ElectLeadersResponseData response = elect(version, electPartition((byte) 0, "ops", 1));

        // Then
        assertThat(response.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(response.replicaElectionResults()).hasSize(1);
        ElectLeadersResponseData.PartitionResult result = response.replicaElectionResults().get(0)
                .partitionResult().get(0);
        assertThat(result.partitionId()).isEqualTo(1);
        assertThat(result.errorCode()).isEqualTo(Errors.ELECTION_NOT_NEEDED.code());
    }

    @Test
    void electingEveryPartitionListsNoneThatNeedsNoElection() throws Exception {
        // When
        ElectLeadersResponseData response = elect(2, new ElectLeadersRequestData().setTopicPartitions(null));

        // Then
        assertThat(response.replicaElectionResults()).allSatisfy(t -> assertThat(t.partitionResult()).isEmpty());
    }

    @Test
    void unknownPartitionsAndElectionTypesGetKafkasErrors() throws Exception {
        // When
        ElectLeadersResponseData unknown = elect(1, electPartition((byte) 1, "ops", 9));
        ElectLeadersResponseData badType = elect(2, electPartition((byte) 5, "ops", 0));

        // Then
        assertThat(unknown.replicaElectionResults().get(0).partitionResult().get(0).errorCode())
                .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        assertThat(badType.errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
    }

    @Test
    void anElectLeadersErrorResponseNamesEveryPartitionAndHasATopLevelCodeFromV1() {
        // Given
        ElectLeadersHandler handler = new ElectLeadersHandler(fixture.node());
        ElectLeadersRequestData request = electPartition((byte) 0, "ops", 0);

        // When
        ElectLeadersResponseData v0 = handler.errorResponse(context(ApiKey.ELECT_LEADERS, 0), request,
                Errors.REQUEST_TIMED_OUT);
        ElectLeadersResponseData v1 = handler.errorResponse(context(ApiKey.ELECT_LEADERS, 1), request,
                Errors.REQUEST_TIMED_OUT);

        // Then
        ElectLeadersResponseData decoded = (ElectLeadersResponseData) MetadataFixture.roundTrip(v0,
                ApiKey.ELECT_LEADERS, 0, true);
        assertThat(decoded.replicaElectionResults().get(0).partitionResult().get(0).errorCode())
                .isEqualTo(Errors.REQUEST_TIMED_OUT.code());
        assertThat(v1.errorCode()).isEqualTo(Errors.REQUEST_TIMED_OUT.code());
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1})
    void reassignmentsToUnknownBrokersAndCancelsOfNothingGetKafkasErrors(int version) throws Exception {
        // When
        AlterPartitionReassignmentsResponseData invalid = reassign(version, new ArrayList<>(List.of(1, 9)));
        AlterPartitionReassignmentsResponseData cancel = reassign(version, null);

        // Then
        assertThat(invalid.responses().get(0).partitions().get(0).errorCode())
                .isEqualTo(Errors.INVALID_REPLICA_ASSIGNMENT.code());
        assertThat(invalid.responses().get(0).partitions().get(0).errorMessage())
                .isEqualTo("The manual partition assignment includes broker 9, but no such broker is registered.");
        assertThat(cancel.responses().get(0).partitions().get(0).errorCode())
                .isEqualTo(Errors.NO_REASSIGNMENT_IN_PROGRESS.code());
    }

    @Test
    void listingWithoutReassignmentsIsEmpty() throws Exception {
        // When
        ListPartitionReassignmentsResponseData response = new ListPartitionReassignmentsHandler(fixture.node())
                .handle(context(ApiKey.LIST_PARTITION_REASSIGNMENTS, 0),
                        new ListPartitionReassignmentsRequestData().setTopics(null))
                .toCompletableFuture().get(30, TimeUnit.SECONDS);

        // Then
        assertThat(response.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(response.topics()).isEmpty();
    }
}
