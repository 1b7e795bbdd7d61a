package io.cairn.broker.group.share;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.wire.protocol.Uuid;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** KIP-932's simple assignor as Kafka 4.1 has it: quotas of ceil(P / M), sticky, only initialized partitions. */
class SimpleAssignorTest {

    private static final Uuid A = new Uuid(1L, 1L);
    private static final Uuid B = new Uuid(2L, 2L);

    private static SimpleAssignor.Topics topics(Map<Uuid, Integer> counts, Set<String> notAssignable) {
        return new SimpleAssignor.Topics() {
            @Override
            public int numPartitions(Uuid topicId) {
                return counts.getOrDefault(topicId, -1);
            }

            @Override
            public boolean isAssignable(Uuid topicId, int partition) {
                return !notAssignable.contains(topicId + "-" + partition);
            }
        };
    }

    private static Map<String, Set<Uuid>> members(int n, Set<Uuid> topics) {
        Map<String, Set<Uuid>> members = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            members.put("member-" + i, topics);
        }
        return members;
    }

    private static Map<Integer, Integer> membersPerPartition(Map<String, Map<Uuid, Set<Integer>>> assignment) {
        Map<Integer, Integer> counts = new HashMap<>();
        assignment.values().forEach(m -> m.values().forEach(ps -> ps.forEach(p -> counts.merge(p, 1, Integer::sum))));
        return counts;
    }

    @Test
    void moreMembersThanPartitionsGivesEveryMemberOnePartitionAndEveryPartitionAMember() {
        Map<String, Map<Uuid, Set<Integer>>> assignment = new SimpleAssignor().assign(members(5, Set.of(A)),
            Map.of(), topics(Map.of(A, 2), Set.of()));

        assertThat(assignment).hasSize(5);
        assertThat(assignment.values()).allSatisfy(m -> assertThat(m.get(A)).hasSize(1));
        assertThat(membersPerPartition(assignment)).containsOnlyKeys(0, 1);
    }

    @Test
    void morePartitionsThanMembersSharesThemOutWithinTheQuota() {
        Map<String, Map<Uuid, Set<Integer>>> assignment = new SimpleAssignor().assign(members(3, Set.of(A, B)),
            Map.of(), topics(Map.of(A, 4, B, 3), Set.of()));

        // 7 partitions, 3 members: a quota of 3 (the round-robin may fill one more, as Kafka's)
        int total = assignment.values().stream().mapToInt(m -> m.values().stream().mapToInt(Set::size).sum()).sum();
        assertThat(total).isGreaterThanOrEqualTo(7);
        assertThat(assignment.values()).allSatisfy(m ->
            assertThat(m.values().stream().mapToInt(Set::size).sum()).isBetween(1, 4));
        Set<String> covered = new java.util.HashSet<>();
        assignment.values().forEach(m -> m.forEach((t, ps) -> ps.forEach(p -> covered.add(t + "-" + p))));
        assertThat(covered).hasSize(7);
    }

    @Test
    void onlyInitializedPartitionsAreAssignedAndNoMembersMeansNoAssignment() {
        Map<String, Map<Uuid, Set<Integer>>> assignment = new SimpleAssignor().assign(members(1, Set.of(A)),
            Map.of(), topics(Map.of(A, 3), Set.of(A + "-1")));

        assertThat(assignment.get("member-0")).containsExactly(Map.entry(A, Set.of(0, 2)));
        assertThat(new SimpleAssignor().assign(Map.of(), Map.of(), topics(Map.of(A, 3), Set.of()))).isEmpty();
    }

    @Test
    void aMemberKeepsWhatItHadWithinItsQuota() {
        Map<String, Set<Uuid>> members = members(2, Set.of(A));
        Map<String, Map<Uuid, Set<Integer>>> first = new SimpleAssignor().assign(members, Map.of(),
            topics(Map.of(A, 4), Set.of()));

        Map<String, Map<Uuid, Set<Integer>>> again = new SimpleAssignor().assign(members, first,
            topics(Map.of(A, 4), Set.of()));

        assertThat(again).isEqualTo(first);
    }

    @Test
    void membersSubscribedToDifferentTopicsGetOnlyTheirTopics() {
        Map<String, Set<Uuid>> members = new LinkedHashMap<>();
        members.put("x", Set.of(A));
        members.put("y", Set.of(B));
        Map<String, Map<Uuid, Set<Integer>>> assignment = new SimpleAssignor().assign(members, Map.of(),
            topics(Map.of(A, 2, B, 2), Set.of()));

        assertThat(assignment.get("x")).containsExactly(Map.entry(A, Set.of(0, 1)));
        assertThat(assignment.get("y")).containsExactly(Map.entry(B, Set.of(0, 1)));
    }
}
