package io.cairn.broker.group.consumer;

import io.cairn.wire.protocol.Uuid;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One member of a consumer group (Kafka's {@code ConsumerGroupMember}): its identity and subscription, and where its
 * reconciliation stands: the partitions it is assigned at its member epoch and those it must still revoke.
 * Immutable; a change makes a new member.
 *
 * @param memberId                    the member id the client chose (KIP-1082: a UUID)
 * @param instanceId                  {@code group.instance.id}, or null for a dynamic member
 * @param rackId                      {@code client.rack}, or null
 * @param memberEpoch                 the member's epoch: the target assignment epoch it has reconciled to, 0 before
 *                                    it joined
 * @param previousMemberEpoch         its epoch before the last bump (a commit with it is still accepted)
 * @param state                       its reconciliation state
 * @param clientId                    the client id of its last heartbeat
 * @param clientHost                  the client host of its last heartbeat
 * @param subscribedTopicNames        its subscription, sorted
 * @param subscribedTopicRegex        its regular expression subscription (RE2J syntax), or null for none
 * @param serverAssignorName          the assignor it asks for ({@code group.remote.assignor}), or null
 * @param rebalanceTimeoutMs          how long it may take to revoke partitions ({@code max.poll.interval.ms})
 * @param assignedPartitions          the partitions it owns at its epoch, by topic id
 * @param partitionsPendingRevocation the partitions it must revoke before it gets more, by topic id
 * @param classicMetadata             for a member speaking the classic protocol (a mixed group, during a migration
 *                                    between protocols), its session timeout and JoinGroup protocols; else null
 */
public record ConsumerGroupMember(String memberId, String instanceId, String rackId, int memberEpoch,
                                  int previousMemberEpoch, MemberState state, String clientId, String clientHost,
                                  List<String> subscribedTopicNames, String subscribedTopicRegex,
                                  String serverAssignorName, int rebalanceTimeoutMs,
                                  Map<Uuid, Set<Integer>> assignedPartitions,
                                  Map<Uuid, Set<Integer>> partitionsPendingRevocation,
                                  ClassicMemberMetadata classicMetadata) {

    public ConsumerGroupMember {
        subscribedTopicNames = subscribedTopicNames.stream().sorted().distinct().toList();
        if (subscribedTopicRegex != null && subscribedTopicRegex.isEmpty()) {
            // The client clears its regular expression with an empty string.
            subscribedTopicRegex = null;
        }
        assignedPartitions = copy(assignedPartitions);
        partitionsPendingRevocation = copy(partitionsPendingRevocation);
    }

    /** A member speaking the consumer protocol (ConsumerGroupHeartbeat). */
    public ConsumerGroupMember(String memberId, String instanceId, String rackId, int memberEpoch,
                               int previousMemberEpoch, MemberState state, String clientId, String clientHost,
                               List<String> subscribedTopicNames, String subscribedTopicRegex,
                               String serverAssignorName, int rebalanceTimeoutMs,
                               Map<Uuid, Set<Integer>> assignedPartitions,
                               Map<Uuid, Set<Integer>> partitionsPendingRevocation) {
        this(memberId, instanceId, rackId, memberEpoch, previousMemberEpoch, state, clientId, clientHost,
            subscribedTopicNames, subscribedTopicRegex, serverAssignorName, rebalanceTimeoutMs, assignedPartitions,
            partitionsPendingRevocation, null);
    }

    /** A member that has just joined: epoch 0, Stable, nothing assigned. */
    public static ConsumerGroupMember joining(String memberId, String instanceId, String rackId, String clientId,
                                              String clientHost, List<String> subscribedTopicNames,
                                              String serverAssignorName, int rebalanceTimeoutMs) {
        return new ConsumerGroupMember(memberId, instanceId, rackId, 0, 0, MemberState.STABLE, clientId, clientHost,
            subscribedTopicNames, null, serverAssignorName, rebalanceTimeoutMs, Map.of(), Map.of());
    }

    /** This member in {@code newState} at {@code newEpoch} (the current epoch becomes the previous one). */
    public ConsumerGroupMember reconciled(MemberState newState, int newEpoch, Map<Uuid, Set<Integer>> assigned,
                                          Map<Uuid, Set<Integer>> pendingRevocation) {
        return new ConsumerGroupMember(memberId, instanceId, rackId, newEpoch, memberEpoch, newState, clientId,
            clientHost, subscribedTopicNames, subscribedTopicRegex, serverAssignorName, rebalanceTimeoutMs, assigned,
            pendingRevocation, classicMetadata);
    }

    /** This member with the subscription, assignor and client details of its latest heartbeat. */
    public ConsumerGroupMember withSubscription(List<String> topicNames, String topicRegex, String assignorName,
                                                String newRackId, String newClientId, String newClientHost,
                                                int newRebalanceTimeoutMs) {
        return new ConsumerGroupMember(memberId, instanceId, newRackId, memberEpoch, previousMemberEpoch, state,
            newClientId, newClientHost, topicNames, topicRegex, assignorName, newRebalanceTimeoutMs,
            assignedPartitions, partitionsPendingRevocation, classicMetadata);
    }

    /** This member speaking the classic protocol with {@code metadata}, or the consumer protocol for null. */
    public ConsumerGroupMember withClassicMetadata(ClassicMemberMetadata metadata) {
        return new ConsumerGroupMember(memberId, instanceId, rackId, memberEpoch, previousMemberEpoch, state,
            clientId, clientHost, subscribedTopicNames, subscribedTopicRegex, serverAssignorName, rebalanceTimeoutMs,
            assignedPartitions, partitionsPendingRevocation, metadata);
    }

    /** Whether the member speaks the classic protocol (JoinGroup, SyncGroup, Heartbeat) in this consumer group. */
    public boolean useClassicProtocol() {
        return classicMetadata != null;
    }

    /** Whether the member has {@code group.instance.id}. */
    public boolean isStatic() {
        return instanceId != null;
    }

    /** Whether anything that matters to the group's target assignment differs from {@code other}'s. */
    public boolean hasSameSubscription(ConsumerGroupMember other) {
        return subscribedTopicNames.equals(other.subscribedTopicNames)
            && java.util.Objects.equals(subscribedTopicRegex, other.subscribedTopicRegex)
            && java.util.Objects.equals(serverAssignorName, other.serverAssignorName)
            && java.util.Objects.equals(rackId, other.rackId);
    }

    /** The number of partitions assigned and pending revocation. */
    public int ownedPartitionCount() {
        return assignedPartitions.values().stream().mapToInt(Set::size).sum()
            + partitionsPendingRevocation.values().stream().mapToInt(Set::size).sum();
    }

    private static Map<Uuid, Set<Integer>> copy(Map<Uuid, Set<Integer>> partitions) {
        Map<Uuid, Set<Integer>> copy = new HashMap<>();
        partitions.forEach((topicId, ids) -> {
            if (!ids.isEmpty()) {
                copy.put(topicId, Set.copyOf(ids));
            }
        });
        return Map.copyOf(copy);
    }
}
