package io.cairn.broker.group.assignor;

import java.util.Map;
import java.util.TreeMap;

/**
 * The members an assignor assigns to, by member id (Kafka's {@code GroupSpec}). Immutable; members are iterated in
 * member id order, so that an assignor is deterministic.
 *
 * @param members the members by member id
 */
public record GroupSpec(Map<String, MemberSubscription> members) {

    public GroupSpec {
        members = java.util.Collections.unmodifiableMap(new TreeMap<>(members));
    }

    /** Whether every member subscribes to the same topics (Kafka's HOMOGENEOUS subscription type). */
    public boolean isHomogeneous() {
        return members.values().stream().map(MemberSubscription::subscribedTopicIds).distinct().count() <= 1;
    }
}
