package io.cairn.broker.group.share;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.group.record.ShareGroupCurrentMemberAssignmentKey;
import io.cairn.broker.group.record.ShareGroupCurrentMemberAssignmentValue;
import io.cairn.broker.group.record.ShareGroupMemberMetadataKey;
import io.cairn.broker.group.record.ShareGroupMemberMetadataValue;
import io.cairn.broker.group.record.ShareGroupMetadataKey;
import io.cairn.broker.group.record.ShareGroupMetadataValue;
import io.cairn.broker.group.record.ShareGroupStatePartitionMetadataKey;
import io.cairn.broker.group.record.ShareGroupStatePartitionMetadataValue;
import io.cairn.broker.group.record.ShareGroupTargetAssignmentMemberKey;
import io.cairn.broker.group.record.ShareGroupTargetAssignmentMemberValue;
import io.cairn.broker.group.record.ShareGroupTargetAssignmentMetadataKey;
import io.cairn.broker.group.record.ShareGroupTargetAssignmentMetadataValue;
import io.cairn.wire.protocol.Uuid;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Rebuilds share groups from their {@code __consumer_offsets} records (types 10-15) while a shard loads, as Kafka's
 * {@code GroupMetadataManager.replay} overloads for share groups do: a record of a member creates the group and the
 * member if needed, a tombstone removes what it keys; the epoch tombstone removes the group.
 *
 * <p>Thread-safety: stateless; the maps are the caller's, on the shard's thread.
 */
final class ShareGroupReplay {

    private ShareGroupReplay() {
    }

    static void replay(Map<String, ShareGroup> groups, Map<String, SharePartitionStates> states,
                       CoordinatorRecord record, long nowMs) {
        Object key = record.key();
        Object value = record.value();
        if (key instanceof ShareGroupMetadataKey k) {
            if (value == null) {
                ShareGroup removed = groups.remove(k.groupId());
                if (removed != null) {
                    removed.markDead();
                }
            } else {
                group(groups, k.groupId()).setGroupEpoch(((ShareGroupMetadataValue) value).epoch());
            }
        } else if (key instanceof ShareGroupMemberMetadataKey k) {
            replayMember(groups, k.groupId(), k.memberId(), (ShareGroupMemberMetadataValue) value);
        } else if (key instanceof ShareGroupTargetAssignmentMetadataKey k) {
            ShareGroup group = groups.get(k.groupId());
            if (value != null) {
                group(groups, k.groupId()).setAssignmentEpoch(
                    ((ShareGroupTargetAssignmentMetadataValue) value).assignmentEpoch());
            } else if (group != null) {
                group.setAssignmentEpoch(0);
            }
        } else if (key instanceof ShareGroupTargetAssignmentMemberKey k) {
            ShareGroup group = groups.get(k.groupId());
            if (value != null) {
                ShareGroupTargetAssignmentMemberValue v = (ShareGroupTargetAssignmentMemberValue) value;
                group(groups, k.groupId()).setTargetAssignment(k.memberId(), ShareGroupRecords.partitions(
                    v.topicPartitions().stream().map(ShareGroupTargetAssignmentMemberValue.TopicPartition::topicId)
                        .toList(),
                    v.topicPartitions().stream().map(ShareGroupTargetAssignmentMemberValue.TopicPartition::partitions)
                        .toList()));
            } else if (group != null) {
                group.removeTargetAssignment(k.memberId());
            }
        } else if (key instanceof ShareGroupCurrentMemberAssignmentKey k) {
            replayCurrentAssignment(groups, k.groupId(), k.memberId(), (ShareGroupCurrentMemberAssignmentValue) value);
        } else if (key instanceof ShareGroupStatePartitionMetadataKey k) {
            if (value == null) {
                states.remove(k.groupId());
            } else {
                states.put(k.groupId(), states((ShareGroupStatePartitionMetadataValue) value, nowMs));
            }
        }
    }

    private static ShareGroup group(Map<String, ShareGroup> groups, String groupId) {
        return groups.computeIfAbsent(groupId, ShareGroup::new);
    }

    private static void replayMember(Map<String, ShareGroup> groups, String groupId, String memberId,
                                     ShareGroupMemberMetadataValue value) {
        if (value == null) {
            ShareGroup group = groups.get(groupId);
            if (group != null) {
                group.removeMember(memberId);
            }
            return;
        }
        ShareGroup group = group(groups, groupId);
        ShareGroupMember member = group.member(memberId);
        if (member == null) {
            member = ShareGroupMember.joining(memberId);
        }
        group.updateMember(member.withSubscription(value.rackId(), value.clientId(), value.clientHost(),
            value.subscribedTopicNames()));
    }

    private static void replayCurrentAssignment(Map<String, ShareGroup> groups, String groupId, String memberId,
                                                ShareGroupCurrentMemberAssignmentValue value) {
        ShareGroup group = groups.get(groupId);
        if (value == null) {
            // The subscription tombstone that follows removes the member.
            return;
        }
        group = group(groups, groupId);
        ShareGroupMember member = group.member(memberId);
        if (member == null) {
            member = ShareGroupMember.joining(memberId);
        }
        Map<Uuid, java.util.Set<Integer>> assigned = ShareGroupRecords.partitions(
            value.assignedPartitions().stream().map(ShareGroupCurrentMemberAssignmentValue.TopicPartitions::topicId)
                .toList(),
            value.assignedPartitions().stream().map(ShareGroupCurrentMemberAssignmentValue.TopicPartitions::partitions)
                .toList());
        group.updateMember(new ShareGroupMember(memberId, value.memberEpoch(), value.previousMemberEpoch(),
            member.rackId(), member.clientId(), member.clientHost(), member.subscribedTopicNames(), assigned));
    }

    private static SharePartitionStates states(ShareGroupStatePartitionMetadataValue value, long nowMs) {
        Map<Uuid, String> deleting = new HashMap<>();
        value.deletingTopics().forEach(t -> deleting.put(t.topicId(), t.topicName()));
        return new SharePartitionStates(topics(value.initializingTopics(), nowMs),
            topics(value.initializedTopics(), nowMs), deleting);
    }

    private static Map<Uuid, SharePartitionStates.Topic> topics(
            List<ShareGroupStatePartitionMetadataValue.TopicPartitionsInfo> infos, long nowMs) {
        Map<Uuid, SharePartitionStates.Topic> topics = new HashMap<>();
        infos.forEach(t -> topics.put(t.topicId(), new SharePartitionStates.Topic(t.topicName(),
            java.util.Set.copyOf(t.partitions()), nowMs)));
        return topics;
    }
}
