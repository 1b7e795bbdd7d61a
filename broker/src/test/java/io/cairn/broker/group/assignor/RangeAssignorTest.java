package io.cairn.broker.group.assignor;

import static io.cairn.broker.group.assignor.AssignorTestSupport.T1;
import static io.cairn.broker.group.assignor.AssignorTestSupport.T2;
import static io.cairn.broker.group.assignor.AssignorTestSupport.T3;
import static io.cairn.broker.group.assignor.AssignorTestSupport.assertCompleteAndValid;
import static io.cairn.broker.group.assignor.AssignorTestSupport.counts;
import static io.cairn.broker.group.assignor.AssignorTestSupport.member;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RangeAssignorTest {

    private final RangeAssignor assignor = new RangeAssignor();

    @Test
    void coPartitionedTopicsShouldGiveEachMemberTheSamePartitionNumbers() {
        // Given
        GroupSpec spec = new GroupSpec(Map.of("A", member(Set.of(T1, T2)), "B", member(Set.of(T1, T2))));
        Map<io.cairn.wire.protocol.Uuid, Integer> partitions = Map.of(T1, 3, T2, 3);

        // When
        GroupAssignment assignment = assignor.assign(spec, counts(partitions));

        // Then
        assertThat(assignment.partitionsOf("A")).isEqualTo(Map.of(T1, Set.of(0, 1), T2, Set.of(0, 1)));
        assertThat(assignment.partitionsOf("B")).isEqualTo(Map.of(T1, Set.of(2), T2, Set.of(2)));
        assertCompleteAndValid(spec, partitions, assignment);
    }

    @Test
    void staticMembersShouldComeFirstInInstanceIdOrder() {
        // Given
        GroupSpec spec = new GroupSpec(Map.of(
            "a-dynamic", member(Set.of(T1)),
            "z-static", new MemberSubscription("i0", null, Set.of(T1), Map.of()),
            "m-static", new MemberSubscription("i1", null, Set.of(T1), Map.of())));

        // When
        GroupAssignment assignment = assignor.assign(spec, counts(Map.of(T1, 4)));

        // Then
        assertThat(assignment.partitionsOf("z-static")).isEqualTo(Map.of(T1, Set.of(0, 1)));
        assertThat(assignment.partitionsOf("m-static")).isEqualTo(Map.of(T1, Set.of(2)));
        assertThat(assignment.partitionsOf("a-dynamic")).isEqualTo(Map.of(T1, Set.of(3)));
    }

    @Test
    void heterogeneousSubscriptionsShouldSplitEachTopicAmongItsSubscribers() {
        // Given
        GroupSpec spec = new GroupSpec(Map.of("A", member(Set.of(T1, T2)), "B", member(Set.of(T2, T3)),
            "C", member(Set.of(T3))));
        Map<io.cairn.wire.protocol.Uuid, Integer> partitions = Map.of(T1, 2, T2, 5, T3, 1);

        // When
        GroupAssignment assignment = assignor.assign(spec, counts(partitions));

        // Then
        assertThat(assignment.partitionsOf("A")).isEqualTo(Map.of(T1, Set.of(0, 1), T2, Set.of(0, 1, 2)));
        assertThat(assignment.partitionsOf("B")).isEqualTo(Map.of(T2, Set.of(3, 4), T3, Set.of(0)));
        assertThat(assignment.partitionsOf("C")).isEmpty();
        assertCompleteAndValid(spec, partitions, assignment);
    }

    @Test
    void aTopicThatDoesNotExistShouldFailTheAssignment() {
        // Given
        GroupSpec spec = new GroupSpec(Map.of("A", member(Set.of(T1))));

        // When / Then
        assertThatThrownBy(() -> assignor.assign(spec, counts(Map.of())))
            .isInstanceOf(PartitionAssignor.PartitionAssignorException.class);
    }
}
