package io.cairn.broker.group.assignor;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.wire.protocol.Uuid;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/** Builders and invariant checks shared by the assignor tests. */
final class AssignorTestSupport {

    static final Uuid T1 = new Uuid(1, 1);
    static final Uuid T2 = new Uuid(2, 2);
    static final Uuid T3 = new Uuid(3, 3);

    private AssignorTestSupport() {
    }

    static MemberSubscription member(Set<Uuid> topics) {
        return new MemberSubscription(null, null, topics, Map.of());
    }

    static MemberSubscription member(Set<Uuid> topics, Map<Uuid, Set<Integer>> current) {
        return new MemberSubscription(null, null, topics, current);
    }

    static TopicPartitionCounts counts(Map<Uuid, Integer> counts) {
        return id -> counts.getOrDefault(id, -1);
    }

    static int size(Map<Uuid, Set<Integer>> partitions) {
        return partitions.values().stream().mapToInt(Set::size).sum();
    }

    /** Every partition of a subscribed topic goes to exactly one subscriber of that topic. */
    static void assertCompleteAndValid(GroupSpec spec, Map<Uuid, Integer> counts, GroupAssignment assignment) {
        Map<Uuid, Set<Integer>> seen = new HashMap<>();
        Set<Uuid> subscribed = new HashSet<>();
        spec.members().forEach((memberId, member) -> {
            subscribed.addAll(member.subscribedTopicIds());
            assignment.partitionsOf(memberId).forEach((topicId, partitions) -> {
                assertThat(member.subscribedTopicIds()).as("%s subscribes to %s", memberId, topicId)
                    .contains(topicId);
                for (int p : partitions) {
                    assertThat(seen.computeIfAbsent(topicId, id -> new HashSet<>()).add(p))
                        .as("%s-%d assigned once", topicId, p).isTrue();
                }
            });
        });
        for (Uuid topicId : subscribed) {
            assertThat(seen.getOrDefault(topicId, Set.of())).as("all partitions of %s", topicId)
                .hasSize(counts.get(topicId));
        }
    }
}
