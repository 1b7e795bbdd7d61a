package io.cairn.broker.group;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.group.consumer.ClassicGroupLink;
import io.cairn.broker.group.consumer.ClassicMemberMetadata;
import io.cairn.broker.group.consumer.ConsumerGroup;
import io.cairn.broker.group.consumer.ConsumerGroupConfig;
import io.cairn.broker.group.consumer.ConsumerGroupMember;
import io.cairn.broker.group.consumer.ConsumerGroupRecords;
import io.cairn.broker.group.consumer.ConsumerGroupTopics;
import io.cairn.broker.group.consumer.EmbeddedConsumerProtocol;
import io.cairn.broker.group.consumer.MemberState;
import io.cairn.broker.group.record.GroupMetadataValue;
import io.cairn.wire.message.ConsumerProtocolSubscription;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The conversions between a shard's classic groups and its consumer groups (Kafka's online migration,
 * {@code GroupMetadataManager.convertToConsumerGroup} and {@code convertToClassicGroup}), and the records Kafka writes
 * for them, so that a shard loading the partition after a failover finds the group as it was:
 *
 * <ul>
 *   <li>Upgrade: the classic group's tombstone, then the consumer group's records: each member's subscription (with
 *       its classic member metadata), the group epoch (the classic generation), each member's target assignment, the
 *       target assignment epoch and each member's current assignment (its last classic assignment, at the
 *       generation, Stable).</li>
 *   <li>Downgrade: the consumer group's tombstones (written by the consumer groups), then the classic group's
 *       metadata record: generation the group epoch, protocol type "consumer", the protocol the members vote for, no
 *       leader, each member with its subscription and its target assignment in the consumer embedded protocol.</li>
 * </ul>
 *
 * <p>Thread-safety: not thread-safe; on the shard's thread.
 */
final class GroupMigration implements ClassicGroupLink {

    private static final Logger LOGGER = LogManager.getLogger(GroupMigration.class);

    private final ClassicGroupManager classicGroups;
    private final ConsumerGroupConfig config;
    private final Supplier<ConsumerGroupTopics> topics;
    private final Supplier<Long> now;
    private final java.util.function.Predicate<String> shareGroupExists;

    /**
     * @param shareGroupExists whether a share group has an id: it counts as an existing group of another type, never
     *                         replaced nor converted (a consumer heartbeat to it gets GROUP_ID_NOT_FOUND, as Kafka's)
     */
    GroupMigration(ClassicGroupManager classicGroups, ConsumerGroupConfig config, Supplier<ConsumerGroupTopics> topics,
                   Supplier<Long> now, java.util.function.Predicate<String> shareGroupExists) {
        this.shareGroupExists = shareGroupExists;
        this.classicGroups = classicGroups;
        this.config = config;
        this.topics = topics;
        this.now = now;
    }

    @Override
    public boolean exists(String groupId) {
        return classicGroups.group(groupId).isPresent() || shareGroupExists.test(groupId);
    }

    @Override
    public List<CoordinatorRecord> replaceEmpty(String groupId) {
        return classicGroups.isEmptyGroup(groupId) ? classicGroups.deleteGroup(groupId) : null;
    }

    @Override
    public Conversion<ConsumerGroup> upgrade(String groupId) {
        ClassicGroup classic = classicGroups.groupOrNull(groupId);
        if (classic == null || !canUpgrade(classic)) {
            return null;
        }
        ConsumerGroup group;
        try {
            group = fromClassicGroup(classic, topics.get());
        } catch (RuntimeException e) {
            LOGGER.warn("[GroupId {}] Cannot upgrade the classic group to a consumer group because the embedded"
                + " consumer protocol is malformed: {}", groupId, e.toString());
            return null;
        }
        GroupMetadataValue saved = classic.toRecordValue(null, now.get());
        List<CoordinatorRecord> records = new ArrayList<>();
        records.add(GroupRecords.groupTombstone(groupId));
        records.addAll(consumerGroupRecords(group));
        classicGroups.detachForUpgrade(classic);
        return new Conversion<>(group, records, () -> classicGroups.attach(groupId, saved, null));
    }

    /** Kafka's {@code validateOnlineUpgrade} (the caller checked the policy). */
    private boolean canUpgrade(ClassicGroup classic) {
        if (!classic.usesConsumerProtocol() || classic.protocolName() == null) {
            LOGGER.info("[GroupId {}] Cannot upgrade the classic group to a consumer group because the group does not"
                + " use the consumer embedded protocol.", classic.groupId());
            return false;
        }
        if (classic.numMembers() > config.maxSize()) {
            LOGGER.info("[GroupId {}] Cannot upgrade the classic group to a consumer group because the group size"
                + " exceeds the consumer group maximum size.", classic.groupId());
            return false;
        }
        return true;
    }

    /**
     * Kafka's {@code ConsumerGroup.fromClassicGroup}: every member speaks the classic protocol, at the generation,
     * Stable, assigned (and targeted) its last classic assignment.
     */
    static ConsumerGroup fromClassicGroup(ClassicGroup classic, ConsumerGroupTopics topics) {
        ConsumerGroup group = new ConsumerGroup(classic.groupId());
        int generation = classic.generationId();
        group.setGroupEpoch(generation);
        group.setTargetAssignmentEpoch(generation);
        for (ClassicGroupMember member : classic.members()) {
            Map<Uuid, Set<Integer>> assigned = EmbeddedConsumerProtocol.assignedPartitions(member.assignment(),
                topics);
            ConsumerProtocolSubscription subscription = EmbeddedConsumerProtocol.subscription(
                member.metadata(classic.protocolName()));
            List<ClassicMemberMetadata.Protocol> protocols = new ArrayList<>();
            member.protocols().forEach((name, metadata) -> protocols.add(new ClassicMemberMetadata.Protocol(name,
                metadata)));
            ConsumerGroupMember converted = new ConsumerGroupMember(member.memberId(), member.groupInstanceId(),
                subscription.rackId(), generation, generation, MemberState.STABLE, member.clientId(),
                member.clientHost(), subscription.topics(), null, null, member.rebalanceTimeoutMs(), assigned,
                Map.of(), new ClassicMemberMetadata(member.sessionTimeoutMs(), protocols));
            group.setTargetAssignment(member.memberId(), assigned);
            group.replayMember(converted);
        }
        return group;
    }

    /** Kafka's {@code createConsumerGroupRecords}. */
    private static List<CoordinatorRecord> consumerGroupRecords(ConsumerGroup group) {
        String groupId = group.groupId();
        List<CoordinatorRecord> records = new ArrayList<>();
        group.members().forEach(member -> records.add(ConsumerGroupRecords.memberSubscription(groupId, member)));
        records.add(ConsumerGroupRecords.groupEpoch(groupId, group.groupEpoch()));
        group.members().forEach(member -> records.add(ConsumerGroupRecords.targetAssignment(groupId,
            member.memberId(), group.targetAssignment(member.memberId()))));
        records.add(ConsumerGroupRecords.targetAssignmentEpoch(groupId, group.groupEpoch()));
        group.members().forEach(member -> records.add(ConsumerGroupRecords.currentAssignment(groupId, member)));
        return records;
    }

    @Override
    public Conversion<Void> downgrade(ConsumerGroup group, String leavingMemberId) {
        GroupMetadataValue value = toClassicGroup(group, leavingMemberId, topics.get(), now.get());
        String groupId = group.groupId();
        Map<String, Map<String, byte[]>> protocols = new HashMap<>();
        for (ConsumerGroupMember member : group.members()) {
            if (!member.memberId().equals(leavingMemberId)) {
                Map<String, byte[]> byName = new java.util.LinkedHashMap<>();
                member.classicMetadata().supportedProtocols().forEach(p -> byName.put(p.name(), p.metadata()));
                protocols.put(member.memberId(), byName);
            }
        }
        classicGroups.attach(groupId, value, protocols);
        if (leavingMemberId != null) {
            classicGroups.rebalanceAfterDowngrade(groupId);
        }
        return new Conversion<>(null, List.of(GroupRecords.group(groupId, value)),
            () -> classicGroups.detachAfterFailedDowngrade(groupId));
    }

    /**
     * Kafka's {@code ClassicGroup.fromConsumerGroup} as the record it writes: the members but the leaving one, the
     * protocol they vote for, each member's target assignment serialized at its subscription's version.
     */
    static GroupMetadataValue toClassicGroup(ConsumerGroup group, String leavingMemberId, ConsumerGroupTopics topics,
                                             long nowMs) {
        List<ConsumerGroupMember> members = group.members().stream()
            .filter(m -> !m.memberId().equals(leavingMemberId)).toList();
        String protocol = selectProtocol(members);
        List<GroupMetadataValue.MemberMetadata> stored = new ArrayList<>();
        for (ConsumerGroupMember member : members) {
            byte[] subscription = member.classicMetadata().supportedProtocols().stream()
                .filter(p -> p.name().equals(protocol)).findFirst().orElseThrow().metadata();
            byte[] assignment = EmbeddedConsumerProtocol.serializeAssignment(group.targetAssignment(member.memberId()),
                topics, EmbeddedConsumerProtocol.version(subscription));
            stored.add(new GroupMetadataValue.MemberMetadata().setMemberId(member.memberId())
                .setGroupInstanceId(member.instanceId()).setClientId(member.clientId())
                .setClientHost(member.clientHost()).setRebalanceTimeout(member.rebalanceTimeoutMs())
                .setSessionTimeout(member.classicMetadata().sessionTimeoutMs()).setSubscription(subscription)
                .setAssignment(assignment));
        }
        return new GroupMetadataValue().setProtocolType(ClassicGroup.CONSUMER_PROTOCOL_TYPE)
            .setGeneration(group.groupEpoch()).setProtocol(protocol).setLeader(null)
            .setCurrentStateTimestamp(nowMs).setMembers(stored);
    }

    /**
     * Kafka's {@code ClassicGroup.selectProtocol}: among the protocols every member supports, each member votes for
     * its most preferred; the most voted wins (ties: the first in the first member's order).
     */
    static String selectProtocol(List<ConsumerGroupMember> members) {
        Set<String> candidates = new LinkedHashSet<>(members.get(0).classicMetadata().protocolNames());
        members.forEach(m -> candidates.retainAll(m.classicMetadata().protocolNames()));
        if (candidates.isEmpty()) {
            throw new IllegalStateException("The classic members of group share no protocol");
        }
        Map<String, Integer> votes = new HashMap<>();
        for (ConsumerGroupMember member : members) {
            for (String name : member.classicMetadata().protocolNames()) {
                if (candidates.contains(name)) {
                    votes.merge(name, 1, Integer::sum);
                    break;
                }
            }
        }
        String best = null;
        for (String name : candidates) {
            if (best == null || votes.getOrDefault(name, 0) > votes.getOrDefault(best, 0)) {
                best = name;
            }
        }
        return best;
    }
}
