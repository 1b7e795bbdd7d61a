package io.cairn.broker.group.assignor;

import io.cairn.wire.protocol.Uuid;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * An assignor's result: each member's partitions by topic id (Kafka's {@code GroupAssignment}); a member with no
 * partition has an empty map. Immutable.
 *
 * @param members the partitions of each member of the spec
 */
public record GroupAssignment(Map<String, Map<Uuid, Set<Integer>>> members) {

    public GroupAssignment {
        Map<String, Map<Uuid, Set<Integer>>> copy = new HashMap<>();
        members.forEach((memberId, partitions) -> {
            Map<Uuid, Set<Integer>> byTopic = new HashMap<>();
            partitions.forEach((topicId, ids) -> {
                if (!ids.isEmpty()) {
                    byTopic.put(topicId, Set.copyOf(ids));
                }
            });
            copy.put(memberId, Map.copyOf(byTopic));
        });
        members = Map.copyOf(copy);
    }

    /** The partitions of {@code memberId}, empty when it has none or is not in the assignment. */
    public Map<Uuid, Set<Integer>> partitionsOf(String memberId) {
        return members.getOrDefault(memberId, Map.of());
    }
}
