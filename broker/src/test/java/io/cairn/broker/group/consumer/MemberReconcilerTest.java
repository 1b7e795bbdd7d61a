package io.cairn.broker.group.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.wire.error.ApiException;
import io.cairn.wire.error.Errors;
import io.cairn.wire.protocol.Uuid;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class MemberReconcilerTest {

    private static final Uuid T1 = new Uuid(1, 1);
    private static final Uuid T2 = new Uuid(2, 2);
    private static final MemberReconciler.PartitionEpochs NOBODY_OWNS = (topic, p) -> MemberReconciler.NO_EPOCH;

    private static ConsumerGroupMember member(MemberState state, int epoch, Map<Uuid, Set<Integer>> assigned,
                                              Map<Uuid, Set<Integer>> pending) {
        return new ConsumerGroupMember("m", null, null, epoch, epoch - 1, state, "client", "/127.0.0.1",
            List.of("t1", "t2"), null, null, 300_000, assigned, pending);
    }

    @Test
    void aStableMemberAtTheTargetEpochShouldStayAsItIs() {
        // Given
        ConsumerGroupMember member = member(MemberState.STABLE, 10, Map.of(T1, Set.of(0, 1)), Map.of());

        // When
        ConsumerGroupMember next = MemberReconciler.reconcile(member, 10, Map.of(T1, Set.of(0, 1, 2)), NOBODY_OWNS,
            null);

        // Then
        assertThat(next).isSameAs(member);
    }

    @Test
    void newPartitionsShouldBeGivenAtTheTargetEpochWhenNothingIsRevoked() {
        // Given
        ConsumerGroupMember member = member(MemberState.STABLE, 10, Map.of(T1, Set.of(0)), Map.of());

        // When
        ConsumerGroupMember next = MemberReconciler.reconcile(member, 11, Map.of(T1, Set.of(0, 1), T2, Set.of(0)),
            NOBODY_OWNS, Map.of(T1, Set.of(0)));

        // Then
        assertThat(next.state()).isEqualTo(MemberState.STABLE);
        assertThat(next.memberEpoch()).isEqualTo(11);
        assertThat(next.previousMemberEpoch()).isEqualTo(10);
        assertThat(next.assignedPartitions()).isEqualTo(Map.of(T1, Set.of(0, 1), T2, Set.of(0)));
        assertThat(next.partitionsPendingRevocation()).isEmpty();
    }

    @Test
    void partitionsLeavingTheTargetShouldBeRevokedBeforeAnythingIsAssigned() {
        // Given
        ConsumerGroupMember member = member(MemberState.STABLE, 10, Map.of(T1, Set.of(0, 1)), Map.of());

        // When
        ConsumerGroupMember next = MemberReconciler.reconcile(member, 11, Map.of(T1, Set.of(0), T2, Set.of(0)),
            NOBODY_OWNS, Map.of(T1, Set.of(0, 1)));

        // Then
        assertThat(next.state()).isEqualTo(MemberState.UNREVOKED_PARTITIONS);
        assertThat(next.memberEpoch()).isEqualTo(10);
        assertThat(next.assignedPartitions()).isEqualTo(Map.of(T1, Set.of(0)));
        assertThat(next.partitionsPendingRevocation()).isEqualTo(Map.of(T1, Set.of(1)));
    }

    @Test
    void aMemberThatStillReportsARevokedPartitionShouldWait() {
        // Given
        ConsumerGroupMember member = member(MemberState.UNREVOKED_PARTITIONS, 10, Map.of(T1, Set.of(0)),
            Map.of(T1, Set.of(1)));

        // When
        ConsumerGroupMember next = MemberReconciler.reconcile(member, 11, Map.of(T1, Set.of(0), T2, Set.of(0)),
            NOBODY_OWNS, Map.of(T1, Set.of(0, 1)));

        // Then
        assertThat(next).isSameAs(member);
    }

    @Test
    void aMemberThatRevokedShouldMoveToTheTargetEpochAndGetItsNewPartitions() {
        // Given
        ConsumerGroupMember member = member(MemberState.UNREVOKED_PARTITIONS, 10, Map.of(T1, Set.of(0)),
            Map.of(T1, Set.of(1)));

        // When
        ConsumerGroupMember next = MemberReconciler.reconcile(member, 11, Map.of(T1, Set.of(0), T2, Set.of(0)),
            NOBODY_OWNS, Map.of(T1, Set.of(0)));

        // Then
        assertThat(next.state()).isEqualTo(MemberState.STABLE);
        assertThat(next.memberEpoch()).isEqualTo(11);
        assertThat(next.assignedPartitions()).isEqualTo(Map.of(T1, Set.of(0), T2, Set.of(0)));
        assertThat(next.partitionsPendingRevocation()).isEmpty();
    }

    @Test
    void aPartitionAnotherMemberStillOwnsShouldWaitUntilReleased() {
        // Given
        ConsumerGroupMember member = member(MemberState.STABLE, 10, Map.of(T1, Set.of(0)), Map.of());
        MemberReconciler.PartitionEpochs t1p1Owned = (topic, p) -> topic.equals(T1) && p == 1 ? 10
            : MemberReconciler.NO_EPOCH;

        // When
        ConsumerGroupMember waiting = MemberReconciler.reconcile(member, 11, Map.of(T1, Set.of(0, 1)), t1p1Owned,
            Map.of(T1, Set.of(0)));
        ConsumerGroupMember released = MemberReconciler.reconcile(waiting, 11, Map.of(T1, Set.of(0, 1)),
            NOBODY_OWNS, Map.of(T1, Set.of(0)));

        // Then
        assertThat(waiting.state()).isEqualTo(MemberState.UNRELEASED_PARTITIONS);
        assertThat(waiting.memberEpoch()).isEqualTo(11);
        assertThat(waiting.assignedPartitions()).isEqualTo(Map.of(T1, Set.of(0)));
        assertThat(released.state()).isEqualTo(MemberState.STABLE);
        assertThat(released.assignedPartitions()).isEqualTo(Map.of(T1, Set.of(0, 1)));
    }

    @Test
    void aRevokedPartitionTheMemberNoLongerReportsShouldNotBeWaitedFor() {
        // Given
        ConsumerGroupMember member = member(MemberState.STABLE, 10, Map.of(T1, Set.of(0, 1)), Map.of());

        // When
        ConsumerGroupMember next = MemberReconciler.reconcile(member, 11, Map.of(T1, Set.of(0)), NOBODY_OWNS,
            Map.of(T1, Set.of(0)));

        // Then
        assertThat(next.state()).isEqualTo(MemberState.STABLE);
        assertThat(next.memberEpoch()).isEqualTo(11);
        assertThat(next.assignedPartitions()).isEqualTo(Map.of(T1, Set.of(0)));
    }

    @Test
    void aMemberInAnUnknownStateShouldBeFencedUnlessItOwnsNothing() {
        // Given
        ConsumerGroupMember member = member(MemberState.UNKNOWN, 10, Map.of(T1, Set.of(0)), Map.of());

        // When
        ConsumerGroupMember fresh = MemberReconciler.reconcile(member, 11, Map.of(T1, Set.of(0)), NOBODY_OWNS,
            Map.of());

        // Then
        assertThatThrownBy(() -> MemberReconciler.reconcile(member, 11, Map.of(T1, Set.of(0)), NOBODY_OWNS,
            Map.of(T1, Set.of(0))))
            .isInstanceOfSatisfying(ApiException.class, e ->
                assertThat(Errors.forException(e)).isEqualTo(Errors.FENCED_MEMBER_EPOCH));
        assertThat(fresh.state()).isEqualTo(MemberState.STABLE);
        assertThat(fresh.memberEpoch()).isEqualTo(11);
    }
}
