package io.cairn.broker.group.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.broker.group.assignor.GroupAssignment;
import io.cairn.broker.group.assignor.UniformAssignor;
import io.cairn.wire.protocol.Uuid;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ConsumerGroupTest {

    private static final Uuid T1 = new Uuid(1, 1);

    private static final ConsumerGroupTopics TOPICS = new ConsumerGroupTopics() {
        @Override
        public Uuid topicId(String name) {
            return "t1".equals(name) ? T1 : null;
        }

        @Override
        public String topicName(Uuid topicId) {
            return T1.equals(topicId) ? "t1" : null;
        }

        @Override
        public int numPartitions(Uuid topicId) {
            return T1.equals(topicId) ? 4 : -1;
        }
    };

    private static ConsumerGroupMember joining(String memberId, String assignor) {
        return ConsumerGroupMember.joining(memberId, null, null, "client", "/127.0.0.1", List.of("t1", "missing"),
            assignor, 300_000);
    }

    @Test
    void theStateShouldFollowTheEpochsAndTheMembers() {
        // Given
        ConsumerGroup group = new ConsumerGroup("g");
        ConsumerGroupState empty = group.state();
        group.updateMember(joining("a", null));
        group.setGroupEpoch(1);
        ConsumerGroupState assigning = group.state();
        GroupAssignment target = group.computeTargetAssignment(new UniformAssignor(), TOPICS);

        // When
        group.setTargetAssignment(1, target);
        ConsumerGroupState reconciling = group.state();
        ConsumerGroupMember a = group.member("a");
        group.updateMember(MemberReconciler.reconcile(a, 1, group.targetAssignment("a"), group::partitionEpoch,
            Map.of()));

        // Then
        assertThat(List.of(empty, assigning, reconciling, group.state())).containsExactly(ConsumerGroupState.EMPTY,
            ConsumerGroupState.ASSIGNING, ConsumerGroupState.RECONCILING, ConsumerGroupState.STABLE);
        assertThat(group.member("a").assignedPartitions()).isEqualTo(Map.of(T1, Set.of(0, 1, 2, 3)));
        assertThat(group.partitionEpoch(T1, 2)).isEqualTo(1);
    }

    @Test
    void aPartitionShouldHaveOneOwnerAtATime() {
        // Given
        ConsumerGroup group = new ConsumerGroup("g");
        group.updateMember(joining("a", null).reconciled(MemberState.STABLE, 1, Map.of(T1, Set.of(0)), Map.of()));
        ConsumerGroupMember b = joining("b", null).reconciled(MemberState.STABLE, 1, Map.of(T1, Set.of(0)),
            Map.of());

        // When / Then
        assertThatThrownBy(() -> group.updateMember(b)).isInstanceOf(IllegalStateException.class);
        assertThat(group.hasMember("b")).isFalse();
        assertThat(group.partitionEpoch(T1, 0)).isEqualTo(1);
    }

    @Test
    void removingAMemberShouldReleaseItsPartitionsAndSubscriptions() {
        // Given
        ConsumerGroup group = new ConsumerGroup("g");
        group.updateMember(joining("a", null).reconciled(MemberState.UNREVOKED_PARTITIONS, 3, Map.of(T1, Set.of(0)),
            Map.of(T1, Set.of(1))));

        // When
        group.removeMember("a");

        // Then
        assertThat(group.partitionEpoch(T1, 0)).isEqualTo(MemberReconciler.NO_EPOCH);
        assertThat(group.partitionEpoch(T1, 1)).isEqualTo(MemberReconciler.NO_EPOCH);
        assertThat(group.isSubscribedToTopic("t1")).isFalse();
        assertThat(group.state()).isEqualTo(ConsumerGroupState.EMPTY);
    }

    @Test
    void theAssignorMostMembersAskForShouldWinElseTheDefault() {
        // Given
        ConsumerGroup group = new ConsumerGroup("g");
        String none = group.preferredAssignor("uniform");
        group.updateMember(joining("a", "range"));
        group.updateMember(joining("b", "range"));
        group.updateMember(joining("c", "uniform"));

        // When
        String chosen = group.preferredAssignor("uniform");

        // Then
        assertThat(none).isEqualTo("uniform");
        assertThat(chosen).isEqualTo("range");
    }
}
