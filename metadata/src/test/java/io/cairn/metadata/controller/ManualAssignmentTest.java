package io.cairn.metadata.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.TestRequests;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.BrokerHeartbeatRequestData;
import io.cairn.wire.message.BrokerRegistrationResponseData;
import io.cairn.wire.message.CreatePartitionsRequestData;
import io.cairn.wire.message.CreatePartitionsResponseData;
import io.cairn.wire.message.CreateTopicsRequestData;
import io.cairn.wire.message.CreateTopicsResponseData;
import io.cairn.wire.protocol.ApiMessage;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Manual replica assignments of CreateTopics and CreatePartitions, checked as Kafka's controller checks them. */
class ManualAssignmentTest {

    private final ControllerLogic logic = new ControllerLogic(ControllerSettings.defaults(0));
    private final Map<Integer, Long> epochs = new HashMap<>();
    private MetadataImage image = MetadataImage.EMPTY;

    @BeforeEach
    void threeBrokersAndATopicWithReplicationFactorTwo() {
        for (int id = 1; id <= 3; id++) {
            BrokerRegistrationResponseData registered = handle(TestRequests.registration(id, null));
            epochs.put(id, registered.brokerEpoch());
            handle(TestRequests.heartbeat(id, registered.brokerEpoch()));
        }
        assertThat(createTopic("t", List.of(List.of(1, 2))).errorCode()).isEqualTo(Errors.NONE.code());
    }

    @Test
    void createPartitionsRejectsUnknownDuplicateMissizedAndAllFencedReplicas() {
        // Given
        fence(3);

        // Then
        assertRejected(createPartitions("t", 2, List.of(List.of(1, 9))),
                "The manual partition assignment includes broker 9, but no such broker is registered.");
        assertRejected(createPartitions("t", 2, List.of(List.of(2, 2))),
                "The manual partition assignment includes the broker 2 more than once.");
        assertRejected(createPartitions("t", 2, List.of(List.of(1, 2, 3))),
                "The manual partition assignment includes a partition with 3 replica(s), but this is not "
                        + "consistent with previous partitions, which have 2 replica(s).");
        assertRejected(createPartitions("t", 2, List.of(List.of())),
                "The manual partition assignment includes an empty replica list.");
        assertThat(image.topic("t").orElseThrow().partitions()).hasSize(1);
    }

    @Test
    void aPartitionWhoseOnlyLiveReplicaIsAssignedGetsItAsLeaderAndSoleIsrMember() {
        // Given
        fence(3);

        // When
        CreatePartitionsResponseData.CreatePartitionsTopicResult result =
                createPartitions("t", 3, List.of(List.of(3, 1), List.of(2, 3)));

        // Then
        assertThat(result.errorCode()).isEqualTo(Errors.NONE.code());
        PartitionRegistration second = image.topic("t").orElseThrow().partitions().get(1);
        assertThat(second.replicas()).containsExactly(3, 1);
        assertThat(second.isr()).containsExactly(1);
        assertThat(second.leader()).isEqualTo(1);
    }

    @Test
    void aPartitionWhoseReplicasAreAllFencedIsRejected() {
        // Given
        fence(3);
        fence(2);

        // Then
        assertRejected(createPartitions("t", 2, List.of(List.of(3, 2))), "All brokers specified in the manual "
                + "partition assignment for partition 1 are fenced or in controlled shutdown.");
        CreateTopicsResponseData.CreatableTopicResult topic = createTopic("u", List.of(List.of(1), List.of(3)));
        assertThat(topic.errorCode()).isEqualTo(Errors.INVALID_REPLICA_ASSIGNMENT.code());
        assertThat(topic.errorMessage()).isEqualTo("All brokers specified in the manual partition assignment for "
                + "partition 1 are fenced or in controlled shutdown.");
        assertThat(image.topic("u")).isEmpty();
    }

    @Test
    void createTopicsRejectsRepeatedAndNonConsecutivePartitionIndexes() {
        // Given
        CreateTopicsRequestData repeated = topicRequest("r", List.of(List.of(1), List.of(2)));
        repeated.topics().iterator().next().assignments().forEach(a -> a.setPartitionIndex(0));
        CreateTopicsRequestData gap = topicRequest("g", List.of(List.of(1), List.of(2)));
        gap.topics().iterator().next().assignments().forEach(a -> a.setPartitionIndex(a.partitionIndex() * 2));

        // When
        CreateTopicsResponseData.CreatableTopicResult repeatedResult =
                ((CreateTopicsResponseData) handle(repeated)).topics().iterator().next();
        CreateTopicsResponseData.CreatableTopicResult gapResult =
                ((CreateTopicsResponseData) handle(gap)).topics().iterator().next();

        // Then
        assertThat(repeatedResult.errorCode()).isEqualTo(Errors.INVALID_REPLICA_ASSIGNMENT.code());
        assertThat(repeatedResult.errorMessage()).isEqualTo("Found multiple manual partition assignments for "
                + "partition 0");
        assertThat(gapResult.errorCode()).isEqualTo(Errors.INVALID_REPLICA_ASSIGNMENT.code());
        assertThat(gapResult.errorMessage()).isEqualTo("partitions should be a consecutive 0-based integer sequence");
    }

    private void assertRejected(CreatePartitionsResponseData.CreatePartitionsTopicResult result, String message) {
        assertThat(result.errorCode()).as(message).isEqualTo(Errors.INVALID_REPLICA_ASSIGNMENT.code());
        assertThat(result.errorMessage()).isEqualTo(message);
    }

    private void fence(int brokerId) {
        handle(new BrokerHeartbeatRequestData().setBrokerId(brokerId).setBrokerEpoch(epochs.get(brokerId))
                .setWantFence(true));
    }

    private CreateTopicsResponseData.CreatableTopicResult createTopic(String name, List<List<Integer>> replicas) {
        return ((CreateTopicsResponseData) handle(topicRequest(name, replicas))).topics().iterator().next();
    }

    private static CreateTopicsRequestData topicRequest(String name, List<List<Integer>> replicas) {
        CreateTopicsRequestData.CreatableTopic topic = new CreateTopicsRequestData.CreatableTopic().setName(name)
                .setNumPartitions(-1).setReplicationFactor((short) -1);
        for (int i = 0; i < replicas.size(); i++) {
            topic.assignments().add(new CreateTopicsRequestData.CreatableReplicaAssignment().setPartitionIndex(i)
                    .setBrokerIds(new ArrayList<>(replicas.get(i))));
        }
        CreateTopicsRequestData request = new CreateTopicsRequestData().setTimeoutMs(1000);
        request.topics().add(topic);
        return request;
    }

    private CreatePartitionsResponseData.CreatePartitionsTopicResult createPartitions(String name, int count,
            List<List<Integer>> replicas) {
        CreatePartitionsRequestData.CreatePartitionsTopic topic = new CreatePartitionsRequestData
                .CreatePartitionsTopic().setName(name).setCount(count).setAssignments(new ArrayList<>());
        replicas.forEach(r -> topic.assignments().add(new CreatePartitionsRequestData.CreatePartitionsAssignment()
                .setBrokerIds(new ArrayList<>(r))));
        CreatePartitionsRequestData request = new CreatePartitionsRequestData().setTimeoutMs(1000);
        request.topics().add(topic);
        return ((CreatePartitionsResponseData) handle(request)).results().get(0);
    }

    private <R extends ApiMessage> R handle(ApiMessage request) {
        @SuppressWarnings("unchecked")
        ControllerResult<R> result = (ControllerResult<R>) logic.handle(image, request, b -> true);
        image = ControllerLogic.apply(image, result.records());
        return result.response();
    }
}
