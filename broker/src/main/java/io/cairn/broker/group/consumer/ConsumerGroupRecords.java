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
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The {@code __consumer_offsets} records of KIP-848 consumer groups (Kafka's {@code GroupCoordinatorRecordHelpers}),
 * each at value version 0, and their conversions back to the model. A member is stored as three records: its
 * subscription (type 5), its target assignment (type 7) and its current assignment (type 8); the group as its epoch
 * (type 3) and its target assignment epoch (type 6), and what each subscribed regular expression matched (type
 * 16). Removing a member writes the three tombstones in Kafka's order (current assignment, target assignment,
 * subscription).
 *
 * <p>Thread-safety: stateless, thread-safe.
 */
public final class ConsumerGroupRecords {

    /** Record type of a group's epoch. */
    public static final short GROUP_METADATA = 3;
    /** Record type of a member's subscription. */
    public static final short MEMBER_METADATA = 5;
    /** Record type of the target assignment epoch. */
    public static final short TARGET_ASSIGNMENT_METADATA = 6;
    /** Record type of a member's target assignment. */
    public static final short TARGET_ASSIGNMENT_MEMBER = 7;
    /** Record type of a member's current assignment. */
    public static final short CURRENT_MEMBER_ASSIGNMENT = 8;
    /** Record type of what a subscribed regular expression matched. */
    public static final short REGULAR_EXPRESSION = 16;

    private static final short VERSION = 0;
    private static final Comparator<Uuid> TOPIC_ORDER = Comparator.comparingLong(Uuid::mostSignificantBits)
        .thenComparingLong(Uuid::leastSignificantBits);

    private ConsumerGroupRecords() {
    }

    public static CoordinatorRecord groupEpoch(String groupId, int epoch) {
        return new CoordinatorRecord(new ConsumerGroupMetadataKey().setGroupId(groupId), GROUP_METADATA,
            new ConsumerGroupMetadataValue().setEpoch(epoch), VERSION);
    }

    public static CoordinatorRecord groupEpochTombstone(String groupId) {
        return new CoordinatorRecord(new ConsumerGroupMetadataKey().setGroupId(groupId), GROUP_METADATA, null,
            VERSION);
    }

    public static CoordinatorRecord memberSubscription(String groupId, ConsumerGroupMember member) {
        return new CoordinatorRecord(new ConsumerGroupMemberMetadataKey().setGroupId(groupId)
            .setMemberId(member.memberId()), MEMBER_METADATA, new ConsumerGroupMemberMetadataValue()
            .setInstanceId(member.instanceId()).setRackId(member.rackId()).setClientId(member.clientId())
            .setClientHost(member.clientHost()).setSubscribedTopicNames(member.subscribedTopicNames())
            .setSubscribedTopicRegex(regexOrEmpty(member)).setRebalanceTimeoutMs(member.rebalanceTimeoutMs())
            .setServerAssignor(member.serverAssignorName())
            .setClassicMemberMetadata(classicMetadata(member.classicMetadata())), VERSION);
    }

    private static ConsumerGroupMemberMetadataValue.ClassicMemberMetadata classicMetadata(
            ClassicMemberMetadata metadata) {
        if (metadata == null) {
            return null;
        }
        List<ConsumerGroupMemberMetadataValue.ClassicProtocol> protocols = new ArrayList<>();
        metadata.supportedProtocols().forEach(p -> protocols.add(new ConsumerGroupMemberMetadataValue.ClassicProtocol()
            .setName(p.name()).setMetadata(p.metadata())));
        return new ConsumerGroupMemberMetadataValue.ClassicMemberMetadata()
            .setSessionTimeoutMs(metadata.sessionTimeoutMs()).setSupportedProtocols(protocols);
    }

    /** The classic member metadata of a member subscription record, or null for a consumer-protocol member. */
    static ClassicMemberMetadata classicMetadata(ConsumerGroupMemberMetadataValue value) {
        ConsumerGroupMemberMetadataValue.ClassicMemberMetadata stored = value.classicMemberMetadata();
        if (stored == null || stored.supportedProtocols().isEmpty()) {
            return null;
        }
        List<ClassicMemberMetadata.Protocol> protocols = new ArrayList<>();
        stored.supportedProtocols().forEach(p -> protocols.add(new ClassicMemberMetadata.Protocol(p.name(),
            p.metadata())));
        return new ClassicMemberMetadata(stored.sessionTimeoutMs(), protocols);
    }

    /** A member's regular expression as Kafka writes and describes it: "" for none. */
    static String regexOrEmpty(ConsumerGroupMember member) {
        return member.subscribedTopicRegex() == null ? "" : member.subscribedTopicRegex();
    }

    public static CoordinatorRecord memberSubscriptionTombstone(String groupId, String memberId) {
        return new CoordinatorRecord(new ConsumerGroupMemberMetadataKey().setGroupId(groupId).setMemberId(memberId),
            MEMBER_METADATA, null, VERSION);
    }

    public static CoordinatorRecord targetAssignmentEpoch(String groupId, int epoch) {
        return new CoordinatorRecord(new ConsumerGroupTargetAssignmentMetadataKey().setGroupId(groupId),
            TARGET_ASSIGNMENT_METADATA, new ConsumerGroupTargetAssignmentMetadataValue().setAssignmentEpoch(epoch),
            VERSION);
    }

    public static CoordinatorRecord targetAssignmentEpochTombstone(String groupId) {
        return new CoordinatorRecord(new ConsumerGroupTargetAssignmentMetadataKey().setGroupId(groupId),
            TARGET_ASSIGNMENT_METADATA, null, VERSION);
    }

    public static CoordinatorRecord targetAssignment(String groupId, String memberId,
                                                     Map<Uuid, Set<Integer>> partitions) {
        List<ConsumerGroupTargetAssignmentMemberValue.TopicPartition> topics = new ArrayList<>();
        sorted(partitions).forEach((topicId, ids) -> topics.add(
            new ConsumerGroupTargetAssignmentMemberValue.TopicPartition().setTopicId(topicId).setPartitions(ids)));
        return new CoordinatorRecord(new ConsumerGroupTargetAssignmentMemberKey().setGroupId(groupId)
            .setMemberId(memberId), TARGET_ASSIGNMENT_MEMBER,
            new ConsumerGroupTargetAssignmentMemberValue().setTopicPartitions(topics), VERSION);
    }

    public static CoordinatorRecord targetAssignmentTombstone(String groupId, String memberId) {
        return new CoordinatorRecord(new ConsumerGroupTargetAssignmentMemberKey().setGroupId(groupId)
            .setMemberId(memberId), TARGET_ASSIGNMENT_MEMBER, null, VERSION);
    }

    public static CoordinatorRecord currentAssignment(String groupId, ConsumerGroupMember member) {
        return new CoordinatorRecord(new ConsumerGroupCurrentMemberAssignmentKey().setGroupId(groupId)
            .setMemberId(member.memberId()), CURRENT_MEMBER_ASSIGNMENT, new ConsumerGroupCurrentMemberAssignmentValue()
            .setMemberEpoch(member.memberEpoch()).setPreviousMemberEpoch(member.previousMemberEpoch())
            .setState(member.state().value()).setAssignedPartitions(topicPartitions(member.assignedPartitions()))
            .setPartitionsPendingRevocation(topicPartitions(member.partitionsPendingRevocation())), VERSION);
    }

    public static CoordinatorRecord currentAssignmentTombstone(String groupId, String memberId) {
        return new CoordinatorRecord(new ConsumerGroupCurrentMemberAssignmentKey().setGroupId(groupId)
            .setMemberId(memberId), CURRENT_MEMBER_ASSIGNMENT, null, VERSION);
    }

    public static CoordinatorRecord regularExpression(String groupId, String regex,
                                                      ConsumerGroup.ResolvedRegularExpression resolved) {
        return new CoordinatorRecord(new ConsumerGroupRegularExpressionKey().setGroupId(groupId)
            .setRegularExpression(regex), REGULAR_EXPRESSION, new ConsumerGroupRegularExpressionValue()
            .setTopics(resolved.topics().stream().sorted().toList()).setVersion(resolved.version())
            .setTimestamp(resolved.timestampMs()), VERSION);
    }

    public static CoordinatorRecord regularExpressionTombstone(String groupId, String regex) {
        return new CoordinatorRecord(new ConsumerGroupRegularExpressionKey().setGroupId(groupId)
            .setRegularExpression(regex), REGULAR_EXPRESSION, null, VERSION);
    }

    /**
     * The tombstones that delete an empty group (Kafka's {@code createGroupTombstoneRecords}): its target assignment
     * epoch, its resolved regular expressions, then its epoch.
     */
    public static List<CoordinatorRecord> groupTombstones(ConsumerGroup group) {
        List<CoordinatorRecord> records = new ArrayList<>();
        for (ConsumerGroupMember member : group.members()) {
            records.addAll(memberTombstones(group.groupId(), member.memberId()));
        }
        records.add(targetAssignmentEpochTombstone(group.groupId()));
        group.resolvedRegularExpressions().keySet().stream().sorted()
            .forEach(regex -> records.add(regularExpressionTombstone(group.groupId(), regex)));
        records.add(groupEpochTombstone(group.groupId()));
        return records;
    }

    /** The three tombstones of a member, in Kafka's order. */
    public static List<CoordinatorRecord> memberTombstones(String groupId, String memberId) {
        return List.of(currentAssignmentTombstone(groupId, memberId), targetAssignmentTombstone(groupId, memberId),
            memberSubscriptionTombstone(groupId, memberId));
    }

    /** The partitions of a target assignment record, by topic id. */
    static Map<Uuid, Set<Integer>> partitions(ConsumerGroupTargetAssignmentMemberValue value) {
        Map<Uuid, Set<Integer>> map = new HashMap<>();
        value.topicPartitions().forEach(tp -> map.computeIfAbsent(tp.topicId(), id -> new HashSet<>())
            .addAll(tp.partitions()));
        return map;
    }

    /** The partitions of a current assignment record's list, by topic id. */
    static Map<Uuid, Set<Integer>> partitions(List<ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions> list) {
        Map<Uuid, Set<Integer>> map = new HashMap<>();
        list.forEach(tp -> map.computeIfAbsent(tp.topicId(), id -> new HashSet<>()).addAll(tp.partitions()));
        return map;
    }

    private static List<ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions> topicPartitions(
            Map<Uuid, Set<Integer>> partitions) {
        List<ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions> list = new ArrayList<>();
        sorted(partitions).forEach((topicId, ids) -> list.add(
            new ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions().setTopicId(topicId).setPartitions(ids)));
        return list;
    }

    private static Map<Uuid, List<Integer>> sorted(Map<Uuid, Set<Integer>> partitions) {
        Map<Uuid, List<Integer>> sorted = new java.util.TreeMap<>(TOPIC_ORDER);
        partitions.forEach((topicId, ids) -> sorted.put(topicId, ids.stream().sorted().toList()));
        return sorted;
    }
}
