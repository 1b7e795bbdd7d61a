package io.cairn.broker.group.share;

import io.cairn.wire.protocol.Uuid;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One member of a share group (Kafka's {@code ShareGroupMember}): who it is, what it subscribes to, and its current
 * assignment with the epochs of its reconciliation. A share group member has no partitions to revoke, so it is always
 * in the STABLE state (0) and takes its target assignment at once. Immutable.
 *
 * @param memberEpoch          the epoch the member must heartbeat with
 * @param previousMemberEpoch  its epoch before the last reconciliation (also accepted, as Kafka does)
 * @param subscribedTopicNames the subscribed topic names, sorted
 * @param assignedPartitions   the partitions it is assigned, by topic id
 */
public record ShareGroupMember(String memberId, int memberEpoch, int previousMemberEpoch, String rackId,
                               String clientId, String clientHost, List<String> subscribedTopicNames,
                               Map<Uuid, Set<Integer>> assignedPartitions) {

    /** Kafka's MemberState.STABLE, the only state a share group member is in. */
    public static final byte STATE_STABLE = 0;

    public ShareGroupMember {
        subscribedTopicNames = List.copyOf(subscribedTopicNames);
        assignedPartitions = ShareGroup.copyOf(assignedPartitions);
    }

    /** A member that has just joined: epoch 0, no subscription or assignment yet. */
    static ShareGroupMember joining(String memberId) {
        return new ShareGroupMember(memberId, 0, 0, null, "", "", List.of(), Map.of());
    }

    /** This member with its subscription and identity as the heartbeat sent them. */
    ShareGroupMember withSubscription(String rack, String client, String host, List<String> topics) {
        return new ShareGroupMember(memberId, memberEpoch, previousMemberEpoch, rack, client, host,
            topics.stream().distinct().sorted().toList(), assignedPartitions);
    }

    /** This member reconciled to the target assignment of {@code epoch}. */
    ShareGroupMember reconciledTo(int epoch, Map<Uuid, Set<Integer>> target) {
        return new ShareGroupMember(memberId, epoch, memberEpoch, rackId, clientId, clientHost, subscribedTopicNames,
            target);
    }

    /** Whether the subscription record of the two differs (rack, client, host or topics). */
    boolean sameSubscription(ShareGroupMember other) {
        return java.util.Objects.equals(rackId, other.rackId) && clientId.equals(other.clientId)
            && clientHost.equals(other.clientHost) && subscribedTopicNames.equals(other.subscribedTopicNames);
    }
}
