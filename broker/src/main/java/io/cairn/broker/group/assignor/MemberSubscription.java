package io.cairn.broker.group.assignor;

import io.cairn.wire.protocol.Uuid;
import java.util.Map;
import java.util.Set;

/**
 * What an assignor knows of one member (Kafka's {@code MemberSubscription} and its current target assignment).
 * Immutable.
 *
 * @param instanceId         the member's {@code group.instance.id}, or null for a dynamic member
 * @param rackId             the member's rack, or null (carried, not used: no assignor is rack-aware yet)
 * @param subscribedTopicIds the ids of the existing topics the member subscribes to
 * @param currentAssignment  the member's partitions in the group's current target assignment, by topic id (empty for
 *                           a new member): what a sticky assignor keeps where it can
 */
public record MemberSubscription(String instanceId, String rackId, Set<Uuid> subscribedTopicIds,
                                 Map<Uuid, Set<Integer>> currentAssignment) {

    public MemberSubscription {
        subscribedTopicIds = Set.copyOf(subscribedTopicIds);
        currentAssignment = Map.copyOf(currentAssignment);
    }
}
