package io.cairn.broker.group.assignor;

import static io.cairn.broker.group.assignor.AssignorTestSupport.T1;
import static io.cairn.broker.group.assignor.AssignorTestSupport.T2;
import static io.cairn.broker.group.assignor.AssignorTestSupport.T3;
import static io.cairn.broker.group.assignor.AssignorTestSupport.assertCompleteAndValid;
import static io.cairn.broker.group.assignor.AssignorTestSupport.counts;
import static io.cairn.broker.group.assignor.AssignorTestSupport.member;
import static io.cairn.broker.group.assignor.AssignorTestSupport.size;
import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.wire.protocol.Uuid;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class UniformAssignorTest {

    private final UniformAssignor assignor = new UniformAssignor();

    @Test
    void homogeneousMembersShouldDifferByAtMostOnePartition() {
        // Given
        GroupSpec spec = new GroupSpec(Map.of("A", member(Set.of(T1, T2)), "B", member(Set.of(T1, T2)),
            "C", member(Set.of(T1, T2))));
        Map<Uuid, Integer> partitions = Map.of(T1, 5, T2, 3);

        // When
        GroupAssignment assignment = assignor.assign(spec, counts(partitions));

        // Then
        assertCompleteAndValid(spec, partitions, assignment);
        assertThat(List.of("A", "B", "C")).allSatisfy(m ->
            assertThat(size(assignment.partitionsOf(m))).isBetween(2, 3));
    }

    @Test
    void aJoiningMemberShouldOnlyTakePartitionsFromTheOthers() {
        // Given
        Map<Uuid, Integer> partitions = Map.of(T1, 6);
        GroupAssignment before = assignor.assign(new GroupSpec(Map.of("A", member(Set.of(T1)),
            "B", member(Set.of(T1)))), counts(partitions));
        GroupSpec spec = new GroupSpec(Map.of(
            "A", member(Set.of(T1), before.partitionsOf("A")),
            "B", member(Set.of(T1), before.partitionsOf("B")),
            "C", member(Set.of(T1))));

        // When
        GroupAssignment after = assignor.assign(spec, counts(partitions));

        // Then
        assertCompleteAndValid(spec, partitions, after);
        assertThat(before.partitionsOf("A").get(T1)).containsAll(after.partitionsOf("A").get(T1));
        assertThat(before.partitionsOf("B").get(T1)).containsAll(after.partitionsOf("B").get(T1));
        assertThat(List.of("A", "B", "C")).allSatisfy(m -> assertThat(size(after.partitionsOf(m))).isEqualTo(2));
    }

    @Test
    void aLeavingMemberShouldOnlyHandOutItsOwnPartitions() {
        // Given
        Map<Uuid, Integer> partitions = Map.of(T1, 4, T2, 5);
        GroupAssignment before = assignor.assign(new GroupSpec(Map.of("A", member(Set.of(T1, T2)),
            "B", member(Set.of(T1, T2)), "C", member(Set.of(T1, T2)))), counts(partitions));
        GroupSpec spec = new GroupSpec(Map.of(
            "A", member(Set.of(T1, T2), before.partitionsOf("A")),
            "B", member(Set.of(T1, T2), before.partitionsOf("B"))));

        // When
        GroupAssignment after = assignor.assign(spec, counts(partitions));

        // Then
        assertCompleteAndValid(spec, partitions, after);
        for (String m : List.of("A", "B")) {
            before.partitionsOf(m).forEach((topic, kept) ->
                assertThat(after.partitionsOf(m).get(topic)).containsAll(kept));
        }
    }

    @Test
    void heterogeneousSubscriptionsShouldBeBalancedWhereSubscriptionsAllow() {
        // Given: A alone reads T1; A, B and C share T2.
        GroupSpec spec = new GroupSpec(Map.of("A", member(Set.of(T1, T2)), "B", member(Set.of(T2)),
            "C", member(Set.of(T2, T3))));
        Map<Uuid, Integer> partitions = Map.of(T1, 3, T2, 6, T3, 1);

        // When
        GroupAssignment assignment = assignor.assign(spec, counts(partitions));

        // Then
        assertCompleteAndValid(spec, partitions, assignment);
        assertThat(assignment.partitionsOf("A").get(T1)).containsExactlyInAnyOrder(0, 1, 2);
        assertThat(assignment.partitionsOf("C").get(T3)).containsExactly(0);
        assertThat(List.of(size(assignment.partitionsOf("A")), size(assignment.partitionsOf("B")),
            size(assignment.partitionsOf("C")))).containsExactlyInAnyOrder(3, 3, 4);
    }

    @Test
    void randomGroupsShouldAlwaysBeCompleteValidAndUnableToImproveByOneMove() {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        List<Uuid> topics = List.of(T1, T2, T3);
        for (int i = 0; i < 200; i++) {
            int run = i;
            // Given
            Map<Uuid, Integer> partitions = new HashMap<>();
            topics.forEach(t -> partitions.put(t, random.nextInt(8)));
            Map<String, MemberSubscription> members = new HashMap<>();
            int memberCount = 1 + random.nextInt(6);
            for (int m = 0; m < memberCount; m++) {
                Set<Uuid> subscribed = new HashSet<>();
                topics.forEach(t -> {
                    if (random.nextBoolean()) {
                        subscribed.add(t);
                    }
                });
                members.put("m" + m, member(subscribed));
            }
            GroupSpec spec = new GroupSpec(members);

            // When
            GroupAssignment assignment = assignor.assign(spec, counts(partitions));

            // Then
            assertCompleteAndValid(spec, partitions, assignment);
            spec.members().forEach((from, fromMember) -> assignment.partitionsOf(from).keySet().forEach(topic ->
                spec.members().forEach((to, toMember) -> {
                    if (toMember.subscribedTopicIds().contains(topic)) {
                        assertThat(size(assignment.partitionsOf(from)) - size(assignment.partitionsOf(to)))
                            .as("seed %d run %d: %s could give %s to %s", seed, run, from, topic, to)
                            .isLessThanOrEqualTo(1);
                    }
                })));
        }
    }
}
