package io.cairn.metadata.controller;

import static io.cairn.metadata.controller.PartitionImages.partition;
import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.image.ImageRecords;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicImage;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AlterPartitionReassignmentsRequestData;
import io.cairn.wire.message.AlterPartitionReassignmentsRequestData.ReassignablePartition;
import io.cairn.wire.message.AlterPartitionReassignmentsRequestData.ReassignableTopic;
import io.cairn.wire.message.AlterPartitionReassignmentsResponseData;
import io.cairn.wire.message.AlterPartitionReassignmentsResponseData.ReassignablePartitionResponse;
import io.cairn.wire.message.AlterPartitionRequestData;
import io.cairn.wire.message.AlterPartitionResponseData;
import io.cairn.wire.message.ListPartitionReassignmentsRequestData;
import io.cairn.wire.message.ListPartitionReassignmentsResponseData;
import io.cairn.wire.message.ListPartitionReassignmentsResponseData.OngoingPartitionReassignment;
import io.cairn.wire.protocol.ApiMessage;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReassignmentCommandsTest {

    private final ControllerLogic logic = new ControllerLogic(ControllerSettings.defaults(0));

    private MetadataImage image;

    private <R extends ApiMessage> R handle(ApiMessage request) {
        ControllerResult<?> result = logic.handle(image, request, b -> true);
        image = ControllerLogic.apply(image, result.records());
        @SuppressWarnings("unchecked")
        R response = (R) result.response();
        return response;
    }

    private ReassignablePartitionResponse reassign(String topic, int index, List<Integer> replicas) {
        return reassign(topic, index, replicas, true);
    }

    private ReassignablePartitionResponse reassign(String topic, int index, List<Integer> replicas,
                                                   boolean allowRfChange) {
        List<ReassignablePartition> partitions = new ArrayList<>();
        partitions.add(new ReassignablePartition().setPartitionIndex(index)
                .setReplicas(replicas == null ? null : new ArrayList<>(replicas)));
        List<ReassignableTopic> topics = new ArrayList<>();
        topics.add(new ReassignableTopic().setName(topic).setPartitions(partitions));
        AlterPartitionReassignmentsResponseData response = handle(new AlterPartitionReassignmentsRequestData()
                .setAllowReplicationFactorChange(allowRfChange).setTopics(topics));
        assertThat(response.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(response.allowReplicationFactorChange()).isEqualTo(allowRfChange);
        return response.responses().get(0).partitions().get(0);
    }

    private PartitionRegistration p(int index) {
        return PartitionImages.partition(image, "t", index);
    }

    private AlterPartitionResponseData.PartitionData alterIsr(int leader, int index, List<Integer> isr) {
        PartitionRegistration current = p(index);
        TopicImage topic = PartitionImages.topic(image, "t");
        List<AlterPartitionRequestData.BrokerState> states = new ArrayList<>();
        isr.forEach(b -> states.add(new AlterPartitionRequestData.BrokerState().setBrokerId(b).setBrokerEpoch(b)));
        List<AlterPartitionRequestData.PartitionData> partitions = new ArrayList<>();
        partitions.add(new AlterPartitionRequestData.PartitionData().setPartitionIndex(index)
                .setLeaderEpoch(current.leaderEpoch()).setPartitionEpoch(current.partitionEpoch())
                .setNewIsrWithEpochs(states));
        List<AlterPartitionRequestData.TopicData> topics = new ArrayList<>();
        topics.add(new AlterPartitionRequestData.TopicData().setTopicId(topic.id()).setPartitions(partitions));
        AlterPartitionResponseData response = handle(new AlterPartitionRequestData().setBrokerId(leader)
                .setBrokerEpoch(leader).setTopics(topics));
        return response.topics().get(0).partitions().get(0);
    }

    @Test
    void aReassignmentAddsTheTargetReplicasAtOnceAndKeepsTheLeader() {
        // Given
        image = new PartitionImages().brokers(3).topic("t", partition(List.of(1), List.of(1), 1)).image();

        // When
        ReassignablePartitionResponse result = reassign("t", 0, List.of(2, 3));

        // Then
        assertThat(result.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(result.errorMessage()).isNull();
        assertThat(p(0).replicas()).containsExactly(2, 3, 1);
        assertThat(p(0).addingReplicas()).containsExactly(2, 3);
        assertThat(p(0).removingReplicas()).containsExactly(1);
        assertThat(p(0).isr()).containsExactly(1);
        assertThat(p(0).leader()).isEqualTo(1);
        assertThat(p(0).leaderEpoch()).isZero();
    }

    @Test
    void anIsrChangeThatHoldsEveryTargetCompletesTheReassignmentAndElectsATargetLeader() {
        // Given
        image = new PartitionImages().brokers(3).topic("t", partition(List.of(1), List.of(1), 1)).image();
        reassign("t", 0, List.of(2, 3));
        AlterPartitionResponseData.PartitionData partial = alterIsr(1, 0, List.of(1, 2));
        assertThat(p(0).reassigning()).isTrue();
        assertThat(partial.errorCode()).isEqualTo(Errors.NONE.code());

        // When
        AlterPartitionResponseData.PartitionData done = alterIsr(1, 0, List.of(1, 2, 3));

        // Then
        assertThat(p(0).reassigning()).isFalse();
        assertThat(p(0).replicas()).containsExactly(2, 3);
        assertThat(p(0).isr()).containsExactly(2, 3);
        assertThat(p(0).leader()).isEqualTo(2);
        assertThat(p(0).leaderEpoch()).isEqualTo(1);
        assertThat(done.errorCode()).isEqualTo(Errors.NEW_LEADER_ELECTED.code());
    }

    @Test
    void aCompletionThatKeepsTheLeaderAnswersTheFinalStateAndStartsALeaderEpoch() {
        // Given
        image = new PartitionImages().brokers(3).topic("t", partition(List.of(1, 2), List.of(1, 2), 1)).image();
        reassign("t", 0, List.of(1, 3));
        assertThat(p(0).replicas()).containsExactly(1, 3, 2);

        // When
        AlterPartitionResponseData.PartitionData done = alterIsr(1, 0, List.of(1, 2, 3));

        // Then
        assertThat(done.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(p(0).replicas()).containsExactly(1, 3);
        assertThat(p(0).isr()).containsExactly(1, 3);
        assertThat(p(0).leader()).isEqualTo(1);
        assertThat(done.isr()).containsExactly(1, 3);
        assertThat(done.leaderEpoch()).isEqualTo(p(0).leaderEpoch()).isEqualTo(1);
        assertThat(done.partitionEpoch()).isEqualTo(p(0).partitionEpoch());
    }

    @Test
    void reorderingTheReplicasCompletesAtOnceAndLeavesTheLeaderToBalancing() {
        // Given
        image = new PartitionImages().brokers(3)
                .topic("t", partition(List.of(1, 2, 3), List.of(1, 2, 3), 1)).image();

        // When
        reassign("t", 0, List.of(2, 1, 3));

        // Then
        assertThat(p(0).replicas()).containsExactly(2, 1, 3);
        assertThat(p(0).reassigning()).isFalse();
        assertThat(p(0).leader()).isEqualTo(1);
        assertThat(logic.balanceLeaders(image)).hasSize(1);
    }

    @Test
    void cancellingRevertsToTheOriginalReplicas() {
        // Given
        image = new PartitionImages().brokers(3).topic("t", partition(List.of(1), List.of(1), 1)).image();
        reassign("t", 0, List.of(2, 3));
        alterIsr(1, 0, List.of(1, 2));

        // When
        ReassignablePartitionResponse result = reassign("t", 0, null);

        // Then
        assertThat(result.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(p(0).replicas()).containsExactly(1);
        assertThat(p(0).isr()).containsExactly(1);
        assertThat(p(0).reassigning()).isFalse();
        assertThat(p(0).leader()).isEqualTo(1);
    }

    @Test
    void cancellingWithoutAReassignmentIsNoReassignmentInProgress() {
        // Given
        image = new PartitionImages().brokers(1).topic("t", partition(List.of(1), List.of(1), 1)).image();

        // When
        ReassignablePartitionResponse result = reassign("t", 0, null);

        // Then
        assertThat(result.errorCode()).isEqualTo(Errors.NO_REASSIGNMENT_IN_PROGRESS.code());
        assertThat(result.errorMessage()).isEqualTo("No partition reassignment is in progress.");
    }

    @Test
    void aRevertThatNeedsAnUncleanElectionIsRefusedUnlessTheTopicAllowsOne() {
        // Given: the reassignment's only ISR member is an added replica
        image = new PartitionImages().brokers(2)
                .topic("t", new PartitionRegistration(List.of(2, 1), List.of(2), 2, 0, 0, List.of(1), List.of(2)))
                .image();

        // When
        ReassignablePartitionResponse result = reassign("t", 0, null);

        // Then
        assertThat(result.errorCode()).isEqualTo(Errors.INVALID_REPLICA_ASSIGNMENT.code());
        assertThat(result.errorMessage()).isEqualTo("Unable to revert partition assignment for t:0 because it "
                + "would require an unclean leader election.");
    }

    @Test
    void invalidTargetsGetKafkasErrorsAndMessages() {
        // Given
        image = new PartitionImages().brokers(2).topic("t", partition(List.of(1), List.of(1), 1)).image();

        // When
        List<ReassignablePartitionResponse> results = List.of(reassign("t", 0, List.of(1, 9)),
                reassign("t", 0, List.of(2, 2)), reassign("t", 0, List.of()), reassign("t", 3, List.of(1)),
                reassign("nope", 0, List.of(1)), reassign("t", 0, List.of(1, 2), false));

        // Then
        assertThat(results).extracting(ReassignablePartitionResponse::errorCode).containsExactly(
                Errors.INVALID_REPLICA_ASSIGNMENT.code(), Errors.INVALID_REPLICA_ASSIGNMENT.code(),
                Errors.INVALID_REPLICA_ASSIGNMENT.code(), Errors.UNKNOWN_TOPIC_OR_PARTITION.code(),
                Errors.UNKNOWN_TOPIC_OR_PARTITION.code(), Errors.INVALID_REPLICATION_FACTOR.code());
        assertThat(results).extracting(ReassignablePartitionResponse::errorMessage).containsExactly(
                "The manual partition assignment includes broker 9, but no such broker is registered.",
                "The manual partition assignment includes the broker 2 more than once.",
                "The manual partition assignment includes an empty replica list.",
                "Unable to find partition t:3.",
                "Unable to find a topic named nope.",
                "The replication factor is changed from 1 to 2");
        assertThat(p(0).reassigning()).isFalse();
    }

    @Test
    void listingShowsOngoingReassignmentsOnlyForAllOrNamedTopics() {
        // Given
        image = new PartitionImages().brokers(3)
                .topic("t", partition(List.of(1), List.of(1), 1), partition(List.of(2), List.of(2), 2))
                .topic("u", partition(List.of(3), List.of(3), 3)).image();
        reassign("t", 1, List.of(3));

        // When
        ListPartitionReassignmentsResponseData all = handle(new ListPartitionReassignmentsRequestData()
                .setTopics(null));
        List<ListPartitionReassignmentsRequestData.ListPartitionReassignmentsTopics> named = new ArrayList<>();
        named.add(new ListPartitionReassignmentsRequestData.ListPartitionReassignmentsTopics().setName("t")
                .setPartitionIndexes(new ArrayList<>(List.of(0, 7))));
        named.add(new ListPartitionReassignmentsRequestData.ListPartitionReassignmentsTopics().setName("nope")
                .setPartitionIndexes(new ArrayList<>(List.of(0))));
        ListPartitionReassignmentsResponseData some = handle(new ListPartitionReassignmentsRequestData()
                .setTopics(named));

        // Then
        assertThat(all.topics()).hasSize(1);
        assertThat(all.topics().get(0).name()).isEqualTo("t");
        OngoingPartitionReassignment ongoing = all.topics().get(0).partitions().get(0);
        assertThat(ongoing.partitionIndex()).isEqualTo(1);
        assertThat(ongoing.replicas()).containsExactly(3, 2);
        assertThat(ongoing.addingReplicas()).containsExactly(3);
        assertThat(ongoing.removingReplicas()).containsExactly(2);
        assertThat(some.topics()).isEmpty();
    }

    @Test
    void aSnapshotKeepsAnOngoingReassignment() {
        // Given
        image = new PartitionImages().brokers(3).topic("t", partition(List.of(1), List.of(1), 1)).image();
        reassign("t", 0, List.of(2, 3));

        // When
        MetadataImage restored = ControllerLogic.apply(MetadataImage.EMPTY, ImageRecords.of(image));

        // Then
        assertThat(PartitionImages.partition(restored, "t", 0)).isEqualTo(p(0));
    }

    @Test
    void moreThanTenThousandReassignmentsAreAPolicyViolation() {
        // Given
        image = new PartitionImages().brokers(2).topic("t", partition(List.of(1, 2), List.of(1, 2), 1)).image();
        MetadataImage before = image;
        List<ReassignablePartition> partitions = new ArrayList<>();
        for (int i = 0; i <= 10_000; i++) {
            partitions.add(new ReassignablePartition().setPartitionIndex(0).setReplicas(new ArrayList<>(List.of(2, 1))));
        }
        List<ReassignableTopic> topics = new ArrayList<>();
        topics.add(new ReassignableTopic().setName("t").setPartitions(partitions));

        // When
        AlterPartitionReassignmentsResponseData response = handle(new AlterPartitionReassignmentsRequestData()
                .setTopics(topics));

        // Then
        assertThat(response.errorCode()).isEqualTo(Errors.POLICY_VIOLATION.code());
        assertThat(response.errorMessage()).isEqualTo("Unable to perform excessively large batch operation.");
        assertThat(response.responses().get(0).partitions()).hasSize(10_001);
        assertThat(image).isEqualTo(before);
    }
}
