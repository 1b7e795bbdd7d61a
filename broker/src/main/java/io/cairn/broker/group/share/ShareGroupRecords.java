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
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The {@code __consumer_offsets} records of share groups (Kafka's {@code GroupCoordinatorRecordHelpers}), each at
 * value version 0, and their conversions back to the model. A member is three records: its subscription (type 10),
 * its target assignment (13) and its current assignment (14); the group is its epoch (11), its target assignment
 * epoch (12) and its share-partitions with state (15). Removing a member writes the three tombstones in Kafka's order
 * (current assignment, target assignment, subscription); deleting the group adds the state-partition and epoch
 * tombstones last.
 *
 * <p>Thread-safety: stateless, thread-safe.
 */
public final class ShareGroupRecords {

    public static final short MEMBER_METADATA = 10;
    public static final short GROUP_METADATA = 11;
    public static final short TARGET_ASSIGNMENT_METADATA = 12;
    public static final short TARGET_ASSIGNMENT_MEMBER = 13;
    public static final short CURRENT_MEMBER_ASSIGNMENT = 14;
    public static final short STATE_PARTITION_METADATA = 15;

    private static final short VERSION = 0;
    static final Comparator<Uuid> TOPIC_ORDER = Comparator.comparingLong(Uuid::mostSignificantBits)
        .thenComparingLong(Uuid::leastSignificantBits);

    private ShareGroupRecords() {
    }

    /** Whether a record type is a share group's. */
    public static boolean isShareGroupRecord(short type) {
        return type >= MEMBER_METADATA && type <= STATE_PARTITION_METADATA;
    }

    public static CoordinatorRecord groupEpoch(String groupId, int epoch) {
        return new CoordinatorRecord(new ShareGroupMetadataKey().setGroupId(groupId), GROUP_METADATA,
            new ShareGroupMetadataValue().setEpoch(epoch).setMetadataHash(0L), VERSION);
    }

    public static CoordinatorRecord memberSubscription(String groupId, ShareGroupMember member) {
        return new CoordinatorRecord(new ShareGroupMemberMetadataKey().setGroupId(groupId)
            .setMemberId(member.memberId()), MEMBER_METADATA, new ShareGroupMemberMetadataValue()
            .setRackId(member.rackId()).setClientId(member.clientId()).setClientHost(member.clientHost())
            .setSubscribedTopicNames(member.subscribedTopicNames()), VERSION);
    }

    public static CoordinatorRecord targetAssignment(String groupId, String memberId,
                                                     Map<Uuid, Set<Integer>> partitions) {
        List<ShareGroupTargetAssignmentMemberValue.TopicPartition> topics = new ArrayList<>();
        sorted(partitions).forEach((topic, ids) -> topics.add(new ShareGroupTargetAssignmentMemberValue
            .TopicPartition().setTopicId(topic).setPartitions(ids)));
        return new CoordinatorRecord(new ShareGroupTargetAssignmentMemberKey().setGroupId(groupId)
            .setMemberId(memberId), TARGET_ASSIGNMENT_MEMBER,
            new ShareGroupTargetAssignmentMemberValue().setTopicPartitions(topics), VERSION);
    }

    public static CoordinatorRecord targetAssignmentEpoch(String groupId, int epoch) {
        return new CoordinatorRecord(new ShareGroupTargetAssignmentMetadataKey().setGroupId(groupId),
            TARGET_ASSIGNMENT_METADATA, new ShareGroupTargetAssignmentMetadataValue().setAssignmentEpoch(epoch),
            VERSION);
    }

    public static CoordinatorRecord currentAssignment(String groupId, ShareGroupMember member) {
        List<ShareGroupCurrentMemberAssignmentValue.TopicPartitions> topics = new ArrayList<>();
        sorted(member.assignedPartitions()).forEach((topic, ids) -> topics.add(
            new ShareGroupCurrentMemberAssignmentValue.TopicPartitions().setTopicId(topic).setPartitions(ids)));
        return new CoordinatorRecord(new ShareGroupCurrentMemberAssignmentKey().setGroupId(groupId)
            .setMemberId(member.memberId()), CURRENT_MEMBER_ASSIGNMENT, new ShareGroupCurrentMemberAssignmentValue()
            .setMemberEpoch(member.memberEpoch()).setPreviousMemberEpoch(member.previousMemberEpoch())
            .setState(ShareGroupMember.STATE_STABLE).setAssignedPartitions(topics), VERSION);
    }

    public static CoordinatorRecord statePartitions(String groupId, SharePartitionStates states) {
        ShareGroupStatePartitionMetadataValue value = new ShareGroupStatePartitionMetadataValue()
            .setInitializingTopics(topicInfos(states.initializing())).setInitializedTopics(
                topicInfos(states.initialized()));
        List<ShareGroupStatePartitionMetadataValue.TopicInfo> deleting = new ArrayList<>();
        states.deleting().entrySet().stream().sorted(Map.Entry.comparingByKey(TOPIC_ORDER)).forEach(e ->
            deleting.add(new ShareGroupStatePartitionMetadataValue.TopicInfo().setTopicId(e.getKey())
                .setTopicName(e.getValue())));
        value.setDeletingTopics(deleting);
        return new CoordinatorRecord(new ShareGroupStatePartitionMetadataKey().setGroupId(groupId),
            STATE_PARTITION_METADATA, value, VERSION);
    }

    private static List<ShareGroupStatePartitionMetadataValue.TopicPartitionsInfo> topicInfos(
            Map<Uuid, SharePartitionStates.Topic> topics) {
        List<ShareGroupStatePartitionMetadataValue.TopicPartitionsInfo> infos = new ArrayList<>();
        topics.entrySet().stream().sorted(Map.Entry.comparingByKey(TOPIC_ORDER)).forEach(e -> infos.add(
            new ShareGroupStatePartitionMetadataValue.TopicPartitionsInfo().setTopicId(e.getKey())
                .setTopicName(e.getValue().name()).setPartitions(e.getValue().partitions().stream().sorted()
                    .toList())));
        return infos;
    }

    /** The three tombstones of a member, in Kafka's order. */
    public static List<CoordinatorRecord> memberTombstones(String groupId, String memberId) {
        return List.of(
            new CoordinatorRecord(new ShareGroupCurrentMemberAssignmentKey().setGroupId(groupId)
                .setMemberId(memberId), CURRENT_MEMBER_ASSIGNMENT, null, VERSION),
            new CoordinatorRecord(new ShareGroupTargetAssignmentMemberKey().setGroupId(groupId)
                .setMemberId(memberId), TARGET_ASSIGNMENT_MEMBER, null, VERSION),
            new CoordinatorRecord(new ShareGroupMemberMetadataKey().setGroupId(groupId).setMemberId(memberId),
                MEMBER_METADATA, null, VERSION));
    }

    /** The tombstones that delete the group, in Kafka's order (ShareGroup.createGroupTombstoneRecords). */
    public static List<CoordinatorRecord> groupTombstones(ShareGroup group) {
        String groupId = group.groupId();
        List<CoordinatorRecord> records = new ArrayList<>();
        group.members().forEach(m -> records.add(new CoordinatorRecord(new ShareGroupCurrentMemberAssignmentKey()
            .setGroupId(groupId).setMemberId(m.memberId()), CURRENT_MEMBER_ASSIGNMENT, null, VERSION)));
        group.members().forEach(m -> records.add(new CoordinatorRecord(new ShareGroupTargetAssignmentMemberKey()
            .setGroupId(groupId).setMemberId(m.memberId()), TARGET_ASSIGNMENT_MEMBER, null, VERSION)));
        records.add(new CoordinatorRecord(new ShareGroupTargetAssignmentMetadataKey().setGroupId(groupId),
            TARGET_ASSIGNMENT_METADATA, null, VERSION));
        group.members().forEach(m -> records.add(new CoordinatorRecord(new ShareGroupMemberMetadataKey()
            .setGroupId(groupId).setMemberId(m.memberId()), MEMBER_METADATA, null, VERSION)));
        records.add(new CoordinatorRecord(new ShareGroupStatePartitionMetadataKey().setGroupId(groupId),
            STATE_PARTITION_METADATA, null, VERSION));
        records.add(new CoordinatorRecord(new ShareGroupMetadataKey().setGroupId(groupId), GROUP_METADATA, null,
            VERSION));
        return records;
    }

    private static Map<Uuid, List<Integer>> sorted(Map<Uuid, Set<Integer>> partitions) {
        Map<Uuid, List<Integer>> sorted = new java.util.LinkedHashMap<>();
        partitions.entrySet().stream().sorted(Map.Entry.comparingByKey(TOPIC_ORDER)).forEach(e ->
            sorted.put(e.getKey(), e.getValue().stream().sorted().toList()));
        return sorted;
    }

    /** The partitions of a target or current assignment record, by topic id. */
    static Map<Uuid, Set<Integer>> partitions(List<Uuid> topicIds, List<List<Integer>> partitions) {
        Map<Uuid, Set<Integer>> map = new HashMap<>();
        for (int i = 0; i < topicIds.size(); i++) {
            map.computeIfAbsent(topicIds.get(i), t -> new HashSet<>()).addAll(partitions.get(i));
        }
        return map;
    }
}
