package io.cairn.broker.group.consumer;

import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ConsumerGroupDescribeResponseData;
import io.cairn.wire.message.ListGroupsResponseData;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Consumer groups as ListGroups and ConsumerGroupDescribe report them, for {@link ConsumerGroupManager}.
 *
 * <p>Thread-safety: stateless; called on the shard's thread with the shard's groups.
 */
final class ConsumerGroupDescriptions {

    private ConsumerGroupDescriptions() {
    }

    /**
     * The groups as ListGroups reports them (protocol type and group type "consumer"), filtered by state (Kafka's
     * display names, case-insensitive) and by type (case-insensitive); an empty or null filter matches everything.
     */
    static List<ListGroupsResponseData.ListedGroup> list(Collection<ConsumerGroup> groups, Set<String> statesFilter,
                                                         Set<String> typesFilter) {
        Set<String> states = new HashSet<>();
        if (statesFilter != null) {
            statesFilter.forEach(state -> states.add(state.trim().toLowerCase(Locale.ROOT)));
        }
        List<ListGroupsResponseData.ListedGroup> listed = new ArrayList<>();
        if (typesFilter != null && !typesFilter.isEmpty()
                && typesFilter.stream().noneMatch(type -> ConsumerGroup.GROUP_TYPE.equalsIgnoreCase(type.trim()))) {
            return listed;
        }
        for (ConsumerGroup group : groups) {
            ConsumerGroupState state = group.state();
            if (state == ConsumerGroupState.DEAD || (!states.isEmpty() && !states.contains(state.lowerCaseName()))) {
                continue;
            }
            listed.add(new ListGroupsResponseData.ListedGroup().setGroupId(group.groupId())
                .setProtocolType(ConsumerGroup.GROUP_TYPE).setGroupState(state.displayName())
                .setGroupType(ConsumerGroup.GROUP_TYPE));
        }
        return listed;
    }

    /**
     * The group (null: none of that id) as ConsumerGroupDescribe {@code version} reports it (Kafka's
     * {@code asDescribedGroup}): state, epochs, assignor (the preferred one, else {@code defaultAssignor}) and each
     * member with its current and target assignment (topic ids and names, as {@code current} names them);
     * GROUP_ID_NOT_FOUND for an unknown group or one of another type ({@code otherGroupType}). Authorized operations
     * are left to the caller.
     */
    static ConsumerGroupDescribeResponseData.DescribedGroup describe(String groupId, ConsumerGroup group,
                                                                     boolean otherGroupType,
                                                                     ConsumerGroupTopics current,
                                                                     String defaultAssignor, short version) {
        if (group == null) {
            String message = otherGroupType ? "Group " + groupId + " is not a consumer group."
                : "Group " + groupId + " not found.";
            return new ConsumerGroupDescribeResponseData.DescribedGroup().setGroupId(groupId)
                .setErrorCode(Errors.GROUP_ID_NOT_FOUND.code()).setErrorMessage(message);
        }
        List<ConsumerGroupDescribeResponseData.Member> members = new ArrayList<>();
        for (ConsumerGroupMember member : group.members()) {
            ConsumerGroupDescribeResponseData.Member described = new ConsumerGroupDescribeResponseData.Member()
                .setMemberId(member.memberId()).setInstanceId(member.instanceId()).setRackId(member.rackId())
                .setMemberEpoch(member.memberEpoch()).setClientId(member.clientId())
                .setClientHost(member.clientHost()).setSubscribedTopicNames(member.subscribedTopicNames())
                .setSubscribedTopicRegex(ConsumerGroupRecords.regexOrEmpty(member))
                .setAssignment(describedAssignment(member.assignedPartitions(), current))
                .setTargetAssignment(describedAssignment(group.targetAssignment(member.memberId()), current));
            if (version >= 1) {
                // KIP-1099: 1 is a member using the consumer protocol, 0 a member speaking the classic protocol.
                described.setMemberType(member.useClassicProtocol() ? (byte) 0 : (byte) 1);
            }
            members.add(described);
        }
        return new ConsumerGroupDescribeResponseData.DescribedGroup().setGroupId(groupId)
            .setGroupState(group.state().displayName()).setGroupEpoch(group.groupEpoch())
            .setAssignmentEpoch(group.targetAssignmentEpoch())
            .setAssignorName(group.preferredAssignor(defaultAssignor)).setMembers(members);
    }

    private static ConsumerGroupDescribeResponseData.Assignment describedAssignment(
            Map<Uuid, Set<Integer>> partitions, ConsumerGroupTopics current) {
        List<ConsumerGroupDescribeResponseData.TopicPartitions> list = new ArrayList<>();
        partitions.forEach((topicId, ids) -> {
            String name = current.topicName(topicId);
            if (name != null) {
                list.add(new ConsumerGroupDescribeResponseData.TopicPartitions().setTopicId(topicId)
                    .setTopicName(name).setPartitions(ids.stream().sorted().toList()));
            }
        });
        return new ConsumerGroupDescribeResponseData.Assignment().setTopicPartitions(list);
    }
}
