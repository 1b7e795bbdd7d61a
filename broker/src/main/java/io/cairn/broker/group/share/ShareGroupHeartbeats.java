package io.cairn.broker.group.share;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.group.consumer.ConsumerGroupTopics;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.InitializeShareGroupStateRequestData;
import io.cairn.wire.message.ListGroupsResponseData;
import io.cairn.wire.message.ShareGroupDescribeResponseData;
import io.cairn.wire.message.ShareGroupHeartbeatRequestData;
import io.cairn.wire.message.ShareGroupHeartbeatResponseData;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The stateless rules of {@link ShareGroupManager}: Kafka's request checks, the epoch check, the subscribed
 * share-partitions still to initialize, and the shapes of ShareGroupHeartbeat, ShareGroupDescribe and ListGroups
 * answers.
 *
 * <p>Thread-safety: stateless, thread-safe.
 */
final class ShareGroupHeartbeats {

    /** The member epoch of a member leaving the group. */
    static final int LEAVE_GROUP_MEMBER_EPOCH = -1;

    private static final Comparator<Uuid> TOPIC_ORDER = Comparator.comparingLong(Uuid::mostSignificantBits)
        .thenComparingLong(Uuid::leastSignificantBits);

    private ShareGroupHeartbeats() {
    }

    /** A failed heartbeat's answer: the error code and message (Kafka's handleOperationException). */
    static ShareGroupHeartbeatResponseData errorResponse(String groupId, Errors error, Throwable cause) {
        if (error == Errors.UNKNOWN_SERVER_ERROR) {
            org.apache.logging.log4j.LogManager.getLogger(ShareGroupManager.class)
                .error("ShareGroupHeartbeat of group {} failed", groupId, cause);
        }
        return new ShareGroupHeartbeatResponseData().setErrorCode(error.code())
            .setErrorMessage(cause instanceof io.cairn.wire.error.ApiException ? cause.getMessage() : error.message());
    }

    /** Kafka's {@code throwIfShareGroupHeartbeatRequestIsInvalid} (INVALID_REQUEST with its messages). */
    static void validate(ShareGroupHeartbeatRequestData request) {
        requireNonEmpty(request.memberId(), "MemberId can't be empty.");
        requireNonEmpty(request.groupId(), "GroupId can't be empty.");
        requireNonEmpty(request.rackId(), "RackId can't be empty.");
        if (request.memberEpoch() == 0) {
            if (request.subscribedTopicNames() == null || request.subscribedTopicNames().isEmpty()) {
                throw Errors.INVALID_REQUEST.exception("SubscribedTopicNames must be set in first request.");
            }
        } else if (request.memberEpoch() < LEAVE_GROUP_MEMBER_EPOCH) {
            throw Errors.INVALID_REQUEST.exception("MemberEpoch is invalid.");
        }
    }

    private static void requireNonEmpty(String value, String message) {
        if (value != null && value.trim().isEmpty()) {
            throw Errors.INVALID_REQUEST.exception(message);
        }
    }

    /**
     * Kafka's {@code throwIfShareGroupMemberEpochIsInvalid}: an epoch ahead of the member's is fenced, and one behind
     * unless it is the previous epoch (the answer with the new one was lost).
     */
    static void checkEpoch(ShareGroupMember member, int received) {
        if (received > member.memberEpoch()) {
            throw Errors.FENCED_MEMBER_EPOCH.exception("The share group member has a greater member epoch ("
                + received + ") than the one known by the group coordinator (" + member.memberEpoch()
                + "). The member must abandon all its partitions and rejoin.");
        }
        if (received < member.memberEpoch() && received != member.previousMemberEpoch()) {
            throw Errors.FENCED_MEMBER_EPOCH.exception("The share group member has a smaller member epoch ("
                + received + ") than the one known by the group coordinator (" + member.memberEpoch()
                + "), and it does not match the previous member epoch (" + member.previousMemberEpoch()
                + "). The member must abandon all its partitions and rejoin.");
        }
    }

    static ShareGroupHeartbeatResponseData.Assignment assignment(Map<Uuid, Set<Integer>> partitions) {
        List<ShareGroupHeartbeatResponseData.TopicPartitions> list = new ArrayList<>();
        partitions.keySet().stream().sorted(TOPIC_ORDER).forEach(topic -> list.add(
            new ShareGroupHeartbeatResponseData.TopicPartitions().setTopicId(topic)
                .setPartitions(partitions.get(topic).stream().sorted().toList())));
        return new ShareGroupHeartbeatResponseData.Assignment().setTopicPartitions(list);
    }

    /**
     * Kafka's {@code subscribedTopicsChangeMap}: for each subscribed topic that exists, its partitions that are
     * neither initialized nor initializing since less than {@code retryMs}, stamped {@code nowMs}.
     */
    static Map<Uuid, SharePartitionStates.Topic> uninitialized(Set<String> subscribed, SharePartitionStates states,
                                                               ConsumerGroupTopics topics, long nowMs,
                                                               long retryMs) {
        Map<Uuid, SharePartitionStates.Topic> recent = new HashMap<>();
        states.initializing().forEach((topic, value) -> {
            if (nowMs - value.timestampMs() < retryMs) {
                recent.put(topic, value);
            }
        });
        Map<Uuid, SharePartitionStates.Topic> known = SharePartitionStates.combine(states.initialized(), recent);
        Map<Uuid, SharePartitionStates.Topic> change = new HashMap<>();
        for (String name : subscribed) {
            Uuid id = topics.topicId(name);
            if (id == null) {
                continue;
            }
            int count = topics.numPartitions(id);
            Set<Integer> done = known.containsKey(id) ? known.get(id).partitions() : Set.of();
            if (done.isEmpty() || done.size() < count) {
                Set<Integer> missing = new HashSet<>();
                for (int p = 0; p < count; p++) {
                    if (!done.contains(p)) {
                        missing.add(p);
                    }
                }
                change.putIfAbsent(id, new SharePartitionStates.Topic(name, missing, nowMs));
            }
        }
        return change;
    }

    /** The InitializeShareGroupState of these share-partitions: state epoch the group epoch, start offset -1. */
    static InitializeShareGroupStateRequestData initializeRequest(String groupId, int groupEpoch,
                                                                  Map<Uuid, SharePartitionStates.Topic> change) {
        InitializeShareGroupStateRequestData request = new InitializeShareGroupStateRequestData().setGroupId(groupId);
        change.keySet().stream().sorted(TOPIC_ORDER).forEach(topic -> {
            List<InitializeShareGroupStateRequestData.PartitionData> partitions = new ArrayList<>();
            change.get(topic).partitions().stream().sorted().forEach(p -> partitions.add(
                new InitializeShareGroupStateRequestData.PartitionData().setPartition(p).setStateEpoch(groupEpoch)
                    .setStartOffset(-1L)));
            request.topics().add(new InitializeShareGroupStateRequestData.InitializeStateData().setTopicId(topic)
                .setPartitions(partitions));
        });
        return request;
    }

    /** Kafka's share {@code updateTargetAssignment}: every member's new target and the records of the changes. */
    static void updateTargetAssignment(ShareGroup group, SimpleAssignor assignor, ConsumerGroupTopics current,
                                       SharePartitionStates partitionStates, List<CoordinatorRecord> records) {
        Map<String, Set<Uuid>> subscriptions = new LinkedHashMap<>();
        group.members().stream().map(ShareGroupMember::memberId).sorted().forEach(id -> {
            Set<Uuid> ids = new HashSet<>();
            group.member(id).subscribedTopicNames().forEach(name -> {
                Uuid topicId = current.topicId(name);
                if (topicId != null) {
                    ids.add(topicId);
                }
            });
            subscriptions.put(id, ids);
        });
        Map<String, Map<Uuid, Set<Integer>>> assignment = assignor.assign(subscriptions, group.targetAssignment(),
            new SimpleAssignor.Topics() {
                @Override
                public int numPartitions(Uuid topicId) {
                    return current.numPartitions(topicId);
                }

                @Override
                public boolean isAssignable(Uuid topicId, int partition) {
                    return partitionStates.isInitialized(topicId, partition);
                }
            });
        assignment.forEach((memberId, partitions) -> {
            Map<Uuid, Set<Integer>> target = ShareGroup.copyOf(partitions);
            if (!target.equals(group.targetAssignment(memberId)) || !group.targetAssignment().containsKey(memberId)) {
                records.add(ShareGroupRecords.targetAssignment(group.groupId(), memberId, target));
            }
            group.setTargetAssignment(memberId, target);
        });
        group.setAssignmentEpoch(group.groupEpoch());
        records.add(ShareGroupRecords.targetAssignmentEpoch(group.groupId(), group.groupEpoch()));
    }

    /** The groups as ListGroups reports them, filtered by state (case-insensitive) and type. */
    static List<ListGroupsResponseData.ListedGroup> list(Collection<ShareGroup> groups, Set<String> statesFilter,
                                                         Set<String> typesFilter) {
        List<ListGroupsResponseData.ListedGroup> listed = new ArrayList<>();
        if (typesFilter != null && !typesFilter.isEmpty() && typesFilter.stream()
                .noneMatch(type -> ShareGroupManager.GROUP_TYPE.equalsIgnoreCase(type.trim()))) {
            return listed;
        }
        Set<String> states = new HashSet<>();
        if (statesFilter != null) {
            statesFilter.forEach(state -> states.add(state.trim().toLowerCase(Locale.ROOT)));
        }
        for (ShareGroup group : groups) {
            ShareGroup.State state = group.state();
            if (state == ShareGroup.State.DEAD
                    || (!states.isEmpty() && !states.contains(state.displayName().toLowerCase(Locale.ROOT)))) {
                continue;
            }
            listed.add(new ListGroupsResponseData.ListedGroup().setGroupId(group.groupId())
                .setProtocolType(ShareGroupManager.GROUP_TYPE).setGroupState(state.displayName())
                .setGroupType(ShareGroupManager.GROUP_TYPE));
        }
        return listed;
    }

    /** Kafka's {@code ShareGroup.asDescribedGroup}, or GROUP_ID_NOT_FOUND with its message. */
    static ShareGroupDescribeResponseData.DescribedGroup describe(String groupId, ShareGroup group,
                                                                  boolean otherGroupType, ConsumerGroupTopics topics) {
        ShareGroupDescribeResponseData.DescribedGroup described = new ShareGroupDescribeResponseData.DescribedGroup()
            .setGroupId(groupId);
        if (group == null) {
            return described.setErrorCode(Errors.GROUP_ID_NOT_FOUND.code()).setErrorMessage(otherGroupType
                ? "Group " + groupId + " is not a share group." : "Group " + groupId + " not found.");
        }
        described.setAssignorName(SimpleAssignor.NAME).setGroupEpoch(group.groupEpoch())
            .setGroupState(group.state().displayName()).setAssignmentEpoch(group.assignmentEpoch());
        for (ShareGroupMember member : group.members()) {
            List<ShareGroupDescribeResponseData.TopicPartitions> assigned = new ArrayList<>();
            member.assignedPartitions().keySet().stream().sorted(TOPIC_ORDER).forEach(topic -> {
                String name = topics.topicName(topic);
                if (name != null) {
                    assigned.add(new ShareGroupDescribeResponseData.TopicPartitions().setTopicId(topic)
                        .setTopicName(name).setPartitions(member.assignedPartitions().get(topic).stream().sorted()
                            .toList()));
                }
            });
            described.members().add(new ShareGroupDescribeResponseData.Member().setMemberId(member.memberId())
                .setRackId(member.rackId()).setMemberEpoch(member.memberEpoch()).setClientId(member.clientId())
                .setClientHost(member.clientHost()).setSubscribedTopicNames(member.subscribedTopicNames())
                .setAssignment(new ShareGroupDescribeResponseData.Assignment().setTopicPartitions(assigned)));
        }
        return described;
    }
}
