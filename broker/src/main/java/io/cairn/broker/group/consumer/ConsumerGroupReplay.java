package io.cairn.broker.group.consumer;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.group.record.ConsumerGroupCurrentMemberAssignmentKey;
import io.cairn.broker.group.record.ConsumerGroupCurrentMemberAssignmentValue;
import io.cairn.broker.group.record.ConsumerGroupMemberMetadataKey;
import io.cairn.broker.group.record.ConsumerGroupMemberMetadataValue;
import io.cairn.broker.group.record.ConsumerGroupMetadataKey;
import io.cairn.broker.group.record.ConsumerGroupMetadataValue;
import io.cairn.broker.group.record.ConsumerGroupRegularExpressionKey;
import io.cairn.broker.group.record.ConsumerGroupRegularExpressionValue;
import io.cairn.broker.group.record.ConsumerGroupTargetAssignmentMemberKey;
import io.cairn.broker.group.record.ConsumerGroupTargetAssignmentMemberValue;
import io.cairn.broker.group.record.ConsumerGroupTargetAssignmentMetadataKey;
import io.cairn.broker.group.record.ConsumerGroupTargetAssignmentMetadataValue;
import java.util.HashSet;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The replay of a shard's consumer-group records while it loads {@code __consumer_offsets} (Kafka's
 * {@code GroupMetadataManager.replay} for the consumer group record types): each record sets one part of a group
 * (its epoch, a member's subscription with its classic member metadata, a member's target or current assignment,
 * the target assignment epoch, a resolved regular expression), each tombstone removes it; a group's epoch tombstone
 * removes the group. The records of a group are written in an order that leaves it whole at every batch boundary.
 *
 * <p>Thread-safety: stateless; called on the loading thread with the manager's groups.
 */
final class ConsumerGroupReplay {

    private ConsumerGroupReplay() {
    }

    /**
     * Applies one consumer-group record (types 3, 5, 6, 7, 8, 16) to {@code groups} while the shard loads.
     *
     * @param removed told the id of a group a tombstone deleted
     */
    static void replay(Map<String, ConsumerGroup> groups, CoordinatorRecord record, Consumer<String> removed) {
        ApiMessageKey key = ApiMessageKey.of(record.key());
        ConsumerGroup group = groups.get(key.groupId());
        if (record.value() == null) {
            replayTombstone(groups, record.keyVersion(), group, key, removed);
            return;
        }
        if (group == null) {
            group = new ConsumerGroup(key.groupId());
            groups.put(key.groupId(), group);
        }
        if (record.value() instanceof ConsumerGroupMetadataValue value) {
            group.setGroupEpoch(value.epoch());
        } else if (record.value() instanceof ConsumerGroupRegularExpressionValue value) {
            group.setResolvedRegularExpression(key.regex(), new ConsumerGroup.ResolvedRegularExpression(
                new HashSet<>(value.topics()), value.version(), value.timestamp()));
        } else if (record.value() instanceof ConsumerGroupTargetAssignmentMetadataValue value) {
            group.setTargetAssignmentEpoch(value.assignmentEpoch());
        } else if (record.value() instanceof ConsumerGroupTargetAssignmentMemberValue value) {
            group.setTargetAssignment(key.memberId(), ConsumerGroupRecords.partitions(value));
        } else if (record.value() instanceof ConsumerGroupMemberMetadataValue value) {
            ConsumerGroupMember member = group.member(key.memberId());
            ConsumerGroupMember base = member != null ? member
                : ConsumerGroupManager.newMember(key.memberId(), value.instanceId());
            group.replayMember(new ConsumerGroupMember(base.memberId(), value.instanceId(), value.rackId(),
                base.memberEpoch(), base.previousMemberEpoch(), base.state(), value.clientId(), value.clientHost(),
                value.subscribedTopicNames(), value.subscribedTopicRegex(), value.serverAssignor(),
                value.rebalanceTimeoutMs(), base.assignedPartitions(), base.partitionsPendingRevocation(),
                ConsumerGroupRecords.classicMetadata(value)));
        } else if (record.value() instanceof ConsumerGroupCurrentMemberAssignmentValue value) {
            ConsumerGroupMember member = group.member(key.memberId());
            ConsumerGroupMember base = member != null ? member
                : ConsumerGroupManager.newMember(key.memberId(), null);
            group.replayMember(new ConsumerGroupMember(base.memberId(), base.instanceId(), base.rackId(),
                value.memberEpoch(), value.previousMemberEpoch(), MemberState.fromValue(value.state()),
                base.clientId(), base.clientHost(), base.subscribedTopicNames(), base.subscribedTopicRegex(),
                base.serverAssignorName(), base.rebalanceTimeoutMs(),
                ConsumerGroupRecords.partitions(value.assignedPartitions()),
                ConsumerGroupRecords.partitions(value.partitionsPendingRevocation()), base.classicMetadata()));
        }
    }

    private static void replayTombstone(Map<String, ConsumerGroup> groups, short type, ConsumerGroup group,
                                        ApiMessageKey key, Consumer<String> removed) {
        if (group == null) {
            return;
        }
        switch (type) {
            case ConsumerGroupRecords.GROUP_METADATA -> {
                groups.remove(key.groupId());
                removed.accept(key.groupId());
            }
            case ConsumerGroupRecords.MEMBER_METADATA -> group.removeMember(key.memberId());
            case ConsumerGroupRecords.TARGET_ASSIGNMENT_MEMBER -> group.removeTargetAssignment(key.memberId());
            case ConsumerGroupRecords.REGULAR_EXPRESSION -> group.removeResolvedRegularExpression(key.regex());
            case ConsumerGroupRecords.CURRENT_MEMBER_ASSIGNMENT -> {
                ConsumerGroupMember member = group.member(key.memberId());
                if (member != null) {
                    group.replayMember(member.reconciled(member.state(),
                        ConsumerGroupManager.LEAVE_GROUP_MEMBER_EPOCH, Map.of(), Map.of()));
                }
            }
            default -> {
            }
        }
    }

    /** The group and member ids (or regular expression) of a consumer-group record key. */
    private record ApiMessageKey(String groupId, String memberId, String regex) {
        ApiMessageKey(String groupId, String memberId) {
            this(groupId, memberId, null);
        }

        static ApiMessageKey of(Object key) {
            if (key instanceof ConsumerGroupMetadataKey k) {
                return new ApiMessageKey(k.groupId(), null);
            } else if (key instanceof ConsumerGroupTargetAssignmentMetadataKey k) {
                return new ApiMessageKey(k.groupId(), null);
            } else if (key instanceof ConsumerGroupMemberMetadataKey k) {
                return new ApiMessageKey(k.groupId(), k.memberId());
            } else if (key instanceof ConsumerGroupTargetAssignmentMemberKey k) {
                return new ApiMessageKey(k.groupId(), k.memberId());
            } else if (key instanceof ConsumerGroupCurrentMemberAssignmentKey k) {
                return new ApiMessageKey(k.groupId(), k.memberId());
            } else if (key instanceof ConsumerGroupRegularExpressionKey k) {
                return new ApiMessageKey(k.groupId(), null, k.regularExpression());
            }
            throw new IllegalArgumentException("Not a consumer group record key: " + key);
        }
    }
}
