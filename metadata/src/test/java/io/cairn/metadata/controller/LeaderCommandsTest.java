package io.cairn.metadata.controller;

import static io.cairn.metadata.controller.PartitionImages.partition;
import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.record.ConfigRecord;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ElectLeadersRequestData;
import io.cairn.wire.message.ElectLeadersResponseData;
import io.cairn.wire.message.ElectLeadersResponseData.PartitionResult;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class LeaderCommandsTest {

    private final ControllerLogic logic = new ControllerLogic(ControllerSettings.defaults(0));

    private ElectLeadersResponseData response;
    private MetadataImage after;

    private void elect(MetadataImage image, byte type, String topic, Integer... partitions) {
        ElectLeadersRequestData request = new ElectLeadersRequestData().setElectionType(type);
        if (topic == null) {
            request.setTopicPartitions(null);
        } else {
            List<ElectLeadersRequestData.TopicPartitions> topics = new ArrayList<>();
            topics.add(new ElectLeadersRequestData.TopicPartitions().setTopic(topic)
                    .setPartitions(new ArrayList<>(List.of(partitions))));
            request.setTopicPartitions(topics);
        }
        ControllerResult<?> result = logic.handle(image, request, b -> true);
        response = (ElectLeadersResponseData) result.response();
        after = ControllerLogic.apply(image, result.records());
    }

    private PartitionResult result(int topic, int partition) {
        return response.replicaElectionResults().get(topic).partitionResult().get(partition);
    }

    @Test
    void preferredElectionMovesLeadershipToThePreferredReplicaInTheIsr() {
        // Given
        MetadataImage image = new PartitionImages().brokers(3)
                .topic("t", partition(List.of(1, 2, 3), List.of(1, 2, 3), 2)).image();

        // When
        elect(image, (byte) 0, "t", 0);

        // Then
        assertThat(result(0, 0).errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(result(0, 0).errorMessage()).isNull();
        PartitionRegistration p = PartitionImages.partition(after, "t", 0);
        assertThat(p.leader()).isEqualTo(1);
        assertThat(p.leaderEpoch()).isEqualTo(1);
        assertThat(p.isr()).containsExactly(1, 2, 3);
    }

    @Test
    void preferredElectionOfThePreferredLeaderIsNotNeeded() {
        // Given
        MetadataImage image = new PartitionImages().brokers(3)
                .topic("t", partition(List.of(1, 2), List.of(1, 2), 1)).image();

        // When
        elect(image, (byte) 0, "t", 0);

        // Then
        assertThat(result(0, 0).errorCode()).isEqualTo(Errors.ELECTION_NOT_NEEDED.code());
        assertThat(result(0, 0).errorMessage()).isEqualTo("Leader election not needed for topic partition.");
        assertThat(after).isEqualTo(image);
    }

    @Test
    void preferredReplicaOutsideTheIsrOrFencedIsNotAvailable() {
        // Given
        MetadataImage image = new PartitionImages().brokers(3).fenced(3)
                .topic("t", partition(List.of(1, 2), List.of(2), 2),
                        partition(List.of(3, 2), List.of(3, 2), 2)).image();

        // When
        elect(image, (byte) 0, "t", 0, 1);

        // Then
        assertThat(result(0, 0).errorCode()).isEqualTo(Errors.PREFERRED_LEADER_NOT_AVAILABLE.code());
        assertThat(result(0, 1).errorCode()).isEqualTo(Errors.PREFERRED_LEADER_NOT_AVAILABLE.code());
        assertThat(result(0, 1).errorMessage()).isEqualTo("The preferred leader was not available.");
    }

    @Test
    void preferredReplicaInControlledShutdownIsNotAvailable() {
        // Given
        MetadataImage image = new PartitionImages().brokers(2).shuttingDown(1)
                .topic("t", partition(List.of(1, 2), List.of(1, 2), 2)).image();

        // When
        elect(image, (byte) 0, "t", 0);

        // Then
        assertThat(result(0, 0).errorCode()).isEqualTo(Errors.PREFERRED_LEADER_NOT_AVAILABLE.code());
    }

    @Test
    void unknownTopicsAndPartitionsGetKafkasMessages() {
        // Given
        MetadataImage image = new PartitionImages().brokers(1).topic("t", partition(List.of(1), List.of(1), 1))
                .image();

        // When
        elect(image, (byte) 0, "t", 4);

        // Then
        assertThat(result(0, 0).errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        assertThat(result(0, 0).errorMessage()).isEqualTo("No such partition as t-4");
        elect(image, (byte) 0, "nope", 0);
        assertThat(result(0, 0).errorMessage()).isEqualTo("No such topic as nope");
    }

    @Test
    void uncleanElectionOfAPartitionWithALeaderIsNotNeeded() {
        // Given
        MetadataImage image = new PartitionImages().brokers(2)
                .topic("t", partition(List.of(1, 2), List.of(2), 2)).image();

        // When
        elect(image, (byte) 1, "t", 0);

        // Then
        assertThat(result(0, 0).errorCode()).isEqualTo(Errors.ELECTION_NOT_NEEDED.code());
    }

    @Test
    void uncleanElectionTakesALiveReplicaOutsideTheIsrAsSoleIsrMember() {
        // Given: the only ISR member is fenced
        MetadataImage image = new PartitionImages().brokers(3).fenced(1)
                .topic("t", partition(List.of(1, 2, 3), List.of(1), -1)).image();

        // When
        elect(image, (byte) 1, "t", 0);

        // Then
        assertThat(result(0, 0).errorCode()).isEqualTo(Errors.NONE.code());
        PartitionRegistration p = PartitionImages.partition(after, "t", 0);
        assertThat(p.leader()).isEqualTo(2);
        assertThat(p.isr()).containsExactly(2);
    }

    @Test
    void uncleanElectionWithoutAnyLiveReplicaFindsNoEligibleLeader() {
        // Given
        MetadataImage image = new PartitionImages().brokers(2).fenced(1).fenced(2)
                .topic("t", partition(List.of(1, 2), List.of(1), -1)).image();

        // When
        elect(image, (byte) 1, "t", 0);

        // Then
        assertThat(result(0, 0).errorCode()).isEqualTo(Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE.code());
        assertThat(result(0, 0).errorMessage()).isEqualTo("Eligible topic partition leaders are not available.");
    }

    @Test
    void allPartitionsLeavesOutThoseThatNeedNoElection() {
        // Given
        MetadataImage image = new PartitionImages().brokers(3)
                .topic("a", partition(List.of(1, 2), List.of(1, 2), 1), partition(List.of(2, 3), List.of(2, 3), 3))
                .topic("b", partition(List.of(3, 1), List.of(3, 1), 3)).image();

        // When
        elect(image, (byte) 0, null);

        // Then
        assertThat(response.replicaElectionResults()).hasSize(2);
        assertThat(response.replicaElectionResults().get(0).topic()).isEqualTo("a");
        assertThat(response.replicaElectionResults().get(0).partitionResult()).hasSize(1);
        assertThat(result(0, 0).partitionId()).isEqualTo(1);
        assertThat(result(0, 0).errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(response.replicaElectionResults().get(1).partitionResult()).isEmpty();
        assertThat(PartitionImages.partition(after, "a", 1).leader()).isEqualTo(2);
    }

    @Test
    void anUnknownElectionTypeIsAnInvalidRequest() {
        // Given
        MetadataImage image = new PartitionImages().brokers(1).image();

        // When
        elect(image, (byte) 7, null);

        // Then
        assertThat(response.errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
    }

    @Test
    void balancingElectsEveryUsablePreferredReplicaInTheIsr() {
        // Given: p0 can move back, p1's preferred replica is out of the ISR, p2 is balanced, p3 has no leader
        MetadataImage image = new PartitionImages().brokers(3)
                .topic("t", partition(List.of(1, 2), List.of(1, 2), 2), partition(List.of(3, 2), List.of(2), 2),
                        partition(List.of(2, 3), List.of(2, 3), 2), partition(List.of(3, 1), List.of(3), -1))
                .image();

        // When
        MetadataImage balanced = ControllerLogic.apply(image, logic.balanceLeaders(image));

        // Then
        assertThat(logic.leadersImbalanced(image)).isTrue();
        assertThat(PartitionImages.partition(balanced, "t", 0).leader()).isEqualTo(1);
        assertThat(PartitionImages.partition(balanced, "t", 1).leader()).isEqualTo(2);
        assertThat(PartitionImages.partition(balanced, "t", 2).leaderEpoch()).isZero();
        assertThat(PartitionImages.partition(balanced, "t", 3).leader()).isEqualTo(3);
        assertThat(logic.leadersImbalanced(balanced)).isTrue();
        assertThat(logic.balanceLeaders(balanced)).isEmpty();
    }

    @Test
    void balancingStopsAtItsElectionBudget() {
        // Given
        MetadataImage image = new PartitionImages().brokers(2)
                .topic("t", partition(List.of(1, 2), List.of(1, 2), 2), partition(List.of(1, 2), List.of(1, 2), 2),
                        partition(List.of(1, 2), List.of(1, 2), 2)).image();

        // When
        int elections = LeaderCommands.balanceLeaders(new ControllerLogic(ControllerSettings.defaults(1)), image, 2).size();

        // Then
        assertThat(elections).isEqualTo(2);
    }

    @Test
    void moreThanTenThousandElectionsAreAPolicyViolation() {
        // Given: one partition needing an election, named 10001 times
        MetadataImage image = new PartitionImages().brokers(2)
                .topic("t", partition(List.of(1, 2), List.of(1, 2), 2)).image();
        Integer[] many = new Integer[10_001];
        Arrays.fill(many, 0);

        // When
        elect(image, (byte) 0, "t", many);

        // Then
        assertThat(response.errorCode()).isEqualTo(Errors.POLICY_VIOLATION.code());
        assertThat(response.replicaElectionResults().get(0).partitionResult()).hasSize(10_001)
                .allSatisfy(r -> assertThat(r.errorMessage())
                        .isEqualTo("Unable to perform excessively large batch operation."));
        assertThat(after).isEqualTo(image);
    }

    @Test
    void thePeriodicUncleanElectionLeadsOnlyLeaderlessPartitionsOfTopicsThatAllowIt() {
        // Given: broker 1, the only ISR member everywhere, is fenced; topic "u" allows unclean election
        MetadataImage image = ControllerLogic.apply(new PartitionImages().brokers(2).fenced(1)
                .topic("c", partition(List.of(1, 2), List.of(1), -1))
                .topic("u", partition(List.of(1, 2), List.of(1), -1), partition(List.of(2, 1), List.of(2), 2))
                .image(), List.of(new ConfigRecord()
                .setResourceType(ConfigResource.TOPIC).setResourceName("u")
                .setName("unclean.leader.election.enable").setValue("true")));

        // When
        MetadataImage elected = ControllerLogic.apply(image, logic.electUncleanLeaders(image));

        // Then
        assertThat(PartitionImages.partition(elected, "c", 0).leader()).isEqualTo(-1);
        assertThat(PartitionImages.partition(elected, "u", 0).leader()).isEqualTo(2);
        assertThat(PartitionImages.partition(elected, "u", 0).isr()).containsExactly(2);
        assertThat(PartitionImages.partition(elected, "u", 1).leaderEpoch()).isZero();
        assertThat(logic.electUncleanLeaders(elected)).isEmpty();
    }

    @Test
    void thePeriodicUncleanElectionReadsTheTopicThenTheControllerThenTheClusterDefault() {
        // Given: leaderless partitions of topics "a" (no config), "b" (its own false) and "c" (no config); the
        // cluster default allows unclean election, this controller's (node 0) own dynamic config does not, then does
        MetadataImage image = ControllerLogic.apply(new PartitionImages().brokers(2).fenced(1)
                .topic("a", partition(List.of(1, 2), List.of(1), -1))
                .topic("b", partition(List.of(1, 2), List.of(1), -1))
                .image(), List.of(config(ConfigResource.broker(""), "true"),
                config(ConfigResource.topic("b"), "false")));
        MetadataImage nodeRefuses = ControllerLogic.apply(image, List.of(config(ConfigResource.broker("0"), "false")));
        MetadataImage nodeAllows = ControllerLogic.apply(nodeRefuses,
                List.of(config(ConfigResource.broker("0"), "true"), config(ConfigResource.broker(""), "false")));

        // When
        MetadataImage byCluster = ControllerLogic.apply(image, logic.electUncleanLeaders(image));
        List<?> byRefusingNode = logic.electUncleanLeaders(nodeRefuses);
        MetadataImage byNode = ControllerLogic.apply(nodeAllows, logic.electUncleanLeaders(nodeAllows));

        // Then
        assertThat(PartitionImages.partition(byCluster, "a", 0).leader()).isEqualTo(2);
        assertThat(PartitionImages.partition(byCluster, "b", 0).leader()).isEqualTo(-1);
        assertThat(byRefusingNode).isEmpty();
        assertThat(PartitionImages.partition(byNode, "a", 0).leader()).isEqualTo(2);
        assertThat(PartitionImages.partition(byNode, "b", 0).leader()).isEqualTo(-1);
    }

    private static ConfigRecord config(ConfigResource resource, String value) {
        return new ConfigRecord().setResourceType(resource.type()).setResourceName(resource.name())
                .setName("unclean.leader.election.enable").setValue(value);
    }
}
