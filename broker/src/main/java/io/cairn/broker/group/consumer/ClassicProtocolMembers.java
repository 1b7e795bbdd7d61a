package io.cairn.broker.group.consumer;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.coordinator.CoordinatorWriteErrors;
import io.cairn.broker.coordinator.ShardContext;
import io.cairn.wire.error.ApiException;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ConsumerProtocolSubscription;
import io.cairn.wire.message.HeartbeatRequestData;
import io.cairn.wire.message.HeartbeatResponseData;
import io.cairn.wire.message.JoinGroupRequestData;
import io.cairn.wire.message.JoinGroupResponseData;
import io.cairn.wire.message.LeaveGroupRequestData;
import io.cairn.wire.message.LeaveGroupResponseData;
import io.cairn.wire.message.SyncGroupRequestData;
import io.cairn.wire.message.SyncGroupResponseData;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Members of a consumer group that speak the classic protocol, as during a rolling migration between
 * {@code group.protocol=classic} and {@code consumer} (Kafka's {@code classicGroup*ToConsumerGroup}): their JoinGroup,
 * SyncGroup, Heartbeat and LeaveGroup are answered from the consumer group, whose server-side assignor assigns them
 * like any member.
 *
 * <ul>
 *   <li>JoinGroup creates or updates the member (its subscription and owned partitions are read from the embedded
 *       consumer protocol of its first protocol; its protocols are kept as its classic member metadata), bumps the
 *       group epoch when its subscription changed, computes a new target assignment when needed and reconciles the
 *       member, whose epoch is the generation answered. There is no leader: every member is a follower.</li>
 *   <li>SyncGroup answers the member's assigned partitions, serialized at its subscription's version;
 *       REBALANCE_IN_PROGRESS when the group epoch moved past the member's (it must rejoin).</li>
 *   <li>Heartbeat answers REBALANCE_IN_PROGRESS when the member must rejoin: the group epoch moved, it has
 *       partitions to revoke, or partitions it waited for were released.</li>
 *   <li>LeaveGroup removes the members and bumps the group epoch.</li>
 * </ul>
 *
 * A classic member has its own session timeout; it is also removed when it does not rejoin within its rebalance
 * timeout after being told to, or does not sync within it after joining.
 *
 * <p>Thread-safety: not thread-safe; on the shard's thread, as its {@link ConsumerGroupManager}.
 */
public final class ClassicProtocolMembers {

    private static final Logger LOGGER = LogManager.getLogger(ClassicProtocolMembers.class);
    private static final String PROTOCOL_TYPE = "consumer";
    private static final String NO_MEMBER_ID = "";

    private final ConsumerGroupManager manager;
    private final ShardContext<CoordinatorRecord> ctx;
    private final ConsumerGroupConfig config;
    private final Supplier<ConsumerGroupTopics> topics;
    private final Set<String> joinTimers = new HashSet<>();

    ClassicProtocolMembers(ConsumerGroupManager manager, ShardContext<CoordinatorRecord> ctx,
                           ConsumerGroupConfig config, Supplier<ConsumerGroupTopics> topics) {
        this.manager = manager;
        this.ctx = ctx;
        this.config = config;
        this.topics = topics;
    }

    // ------------------------------------------------------------------------------------------------ JoinGroup

    /** A JoinGroup of {@code version} to the consumer group (which has members); errors are in the response. */
    public CompletableFuture<JoinGroupResponseData> join(String clientId, String clientHost,
                                                         JoinGroupRequestData request, short version) {
        String groupId = request.groupId();
        ConsumerGroup group = manager.groupOrNull(groupId);
        if (group == null) {
            return CompletableFuture.completedFuture(joinError(NO_MEMBER_ID, Errors.UNKNOWN_MEMBER_ID, version));
        }
        boolean unknown = request.memberId() == null || request.memberId().isEmpty();
        String memberId = unknown ? ConsumerGroupManager.newMemberId() : request.memberId();
        List<CoordinatorRecord> records = new ArrayList<>();
        ConsumerGroupManager.Snapshot before = manager.snapshot(groupId);
        Joined joined;
        try {
            if (group.numMembers() >= config.maxSize() && !group.hasMember(memberId)) {
                throw Errors.GROUP_MAX_SIZE_REACHED.exception("The consumer group has reached its maximum capacity"
                    + " of " + config.maxSize() + " members.");
            }
            List<ClassicMemberMetadata.Protocol> protocols = new ArrayList<>();
            request.protocols().forEach(p -> protocols.add(new ClassicMemberMetadata.Protocol(p.name(),
                p.metadata())));
            Set<String> names = new HashSet<>();
            protocols.forEach(p -> names.add(p.name()));
            if (!group.supportsClassicProtocols(request.protocolType(), names)) {
                throw Errors.INCONSISTENT_GROUP_PROTOCOL.exception("Member " + memberId
                    + "'s protocols are not supported.");
            }
            if (version >= 4 && unknown && request.groupInstanceId() == null) {
                LOGGER.info("[GroupId {}] Dynamic member with unknown member id joins the consumer group. Created a"
                    + " new member id {} and requesting the member to rejoin with this id.", groupId, memberId);
                return CompletableFuture.completedFuture(new JoinGroupResponseData().setMemberId(memberId)
                    .setGenerationId(-1).setErrorCode(Errors.MEMBER_ID_REQUIRED.code())
                    .setProtocolName(version >= 7 ? null : ""));
            }
            joined = joinMember(group, memberId, unknown, clientId, clientHost, request, protocols, records);
        } catch (ApiException e) {
            manager.restore(before);
            manager.undoConversion();
            return CompletableFuture.completedFuture(joinError(memberId, Errors.forException(e), version));
        }
        CompletableFuture<Void> written = records.isEmpty() ? CompletableFuture.completedFuture(null)
            : manager.writeChange(before, records);
        int rebalanceTimeoutMs = group.member(memberId).rebalanceTimeoutMs();
        return written.handle((ignored, failure) -> {
            if (failure != null) {
                return joinError(memberId, CoordinatorWriteErrors.operationError(failure), version);
            }
            cancelJoinTimer(groupId, memberId);
            if (!joined.downgraded()) {
                // Downgraded, the member is the classic group's, with its session timer.
                manager.scheduleSessionTimeout(groupId, memberId);
                scheduleSyncTimeout(groupId, memberId, rebalanceTimeoutMs);
            }
            return joined.response();
        });
    }

    /** A member's JoinGroup done in memory: its answer, and whether it downgraded the group to a classic group. */
    private record Joined(JoinGroupResponseData response, boolean downgraded) {
    }

    private Joined joinMember(ConsumerGroup group, String memberId, boolean unknown, String clientId,
                              String clientHost, JoinGroupRequestData request,
                              List<ClassicMemberMetadata.Protocol> protocols, List<CoordinatorRecord> records) {
        String groupId = group.groupId();
        // A classic member replacing the last static member speaking the consumer protocol downgrades the group.
        String replacedId = unknown ? group.staticMemberId(request.groupInstanceId()) : null;
        boolean downgrade = replacedId != null && manager.canDowngradeOnReplacement(group, replacedId);
        ConsumerProtocolSubscription subscription;
        try {
            subscription = EmbeddedConsumerProtocol.subscription(protocols.get(0).metadata());
        } catch (RuntimeException e) {
            throw Errors.UNKNOWN_SERVER_ERROR.exception("Malformed embedded consumer protocol in subscription"
                + " deserialization.");
        }
        ConsumerGroupMember member = request.groupInstanceId() == null ? dynamicMember(group, memberId)
            : staticMember(group, memberId, request.groupInstanceId(), unknown);
        ConsumerGroupMember updated = member.withSubscription(subscription.topics(), member.subscribedTopicRegex(),
            member.serverAssignorName(), subscription.rackId() == null ? member.rackId() : subscription.rackId(),
            clientId, clientHost, request.rebalanceTimeoutMs() == -1 ? member.rebalanceTimeoutMs()
                : request.rebalanceTimeoutMs())
            .withClassicMetadata(new ClassicMemberMetadata(request.sessionTimeoutMs(), protocols));
        boolean bump = !updated.subscribedTopicNames().equals(member.subscribedTopicNames())
            || !Objects.equals(updated.subscribedTopicRegex(), member.subscribedTopicRegex());
        boolean changed = !group.hasMember(memberId) || !ConsumerGroupRecords.memberSubscription(groupId, updated)
            .equals(ConsumerGroupRecords.memberSubscription(groupId, member));
        manager.replaceStaticPredecessor(group, updated, records);
        group.updateMember(updated);
        if (changed) {
            records.add(ConsumerGroupRecords.memberSubscription(groupId, updated));
        }
        bump |= manager.refreshSubscriptionMetadata(group);
        if (bump) {
            group.setGroupEpoch(group.groupEpoch() + 1);
            records.add(ConsumerGroupRecords.groupEpoch(groupId, group.groupEpoch()));
            LOGGER.info("[GroupId {}] Bumped group epoch to {}.", groupId, group.groupEpoch());
        }
        if (group.groupEpoch() > group.targetAssignmentEpoch()) {
            manager.updateTargetAssignment(group, records);
        }
        Map<Uuid, Set<Integer>> owned = EmbeddedConsumerProtocol.ownedPartitions(subscription, topics.get());
        ConsumerGroupMember reconciled = manager.reconcile(group, group.member(memberId), owned, records);
        if (downgrade) {
            records.addAll(manager.downgrade(group, null));
        }
        return new Joined(new JoinGroupResponseData().setMemberId(memberId).setGenerationId(reconciled.memberEpoch())
            .setProtocolType(PROTOCOL_TYPE).setProtocolName(protocols.get(0).name()).setLeader(NO_MEMBER_ID)
            .setMembers(List.of()), downgrade);
    }

    private ConsumerGroupMember dynamicMember(ConsumerGroup group, String memberId) {
        ConsumerGroupMember member = group.member(memberId);
        if (member != null) {
            return member;
        }
        LOGGER.info("[GroupId {}] Member {} joins the consumer group using the classic protocol.", group.groupId(),
            memberId);
        return ConsumerGroupManager.newMember(memberId, null);
    }

    private ConsumerGroupMember staticMember(ConsumerGroup group, String memberId, String instanceId,
                                             boolean unknown) {
        String existingId = group.staticMemberId(instanceId);
        ConsumerGroupMember existing = existingId == null ? null : group.member(existingId);
        if (!unknown) {
            if (existing == null) {
                throw Errors.UNKNOWN_MEMBER_ID.exception("Instance id " + instanceId + " is unknown.");
            }
            if (!existing.memberId().equals(memberId)) {
                throw Errors.FENCED_INSTANCE_ID.exception("Static member " + memberId + " with instance id "
                    + instanceId + " was fenced by member " + existingId + ".");
            }
            return existing;
        }
        if (existing == null) {
            LOGGER.info("[GroupId {}] Static member {} with instance id {} joins the consumer group using the classic"
                + " protocol.", group.groupId(), memberId, instanceId);
            return ConsumerGroupManager.newMember(memberId, instanceId);
        }
        LOGGER.info("[GroupId {}] Static member with instance id {} re-joins the consumer group using the classic"
            + " protocol. Created a new member {} to replace the existing member {}.", group.groupId(), instanceId,
            memberId, existingId);
        return new ConsumerGroupMember(memberId, instanceId, existing.rackId(), 0, 0, existing.state(),
            existing.clientId(), existing.clientHost(), existing.subscribedTopicNames(),
            existing.subscribedTopicRegex(), existing.serverAssignorName(), existing.rebalanceTimeoutMs(),
            existing.assignedPartitions(), existing.partitionsPendingRevocation(), existing.classicMetadata());
    }

    /** Kafka's JoinGroup error response. */
    private static JoinGroupResponseData joinError(String memberId, Errors error, short version) {
        return new JoinGroupResponseData().setMemberId(memberId).setErrorCode(error.code()).setGenerationId(-1)
            .setProtocolType(null).setProtocolName(version >= 7 ? null : "").setLeader(NO_MEMBER_ID)
            .setMembers(List.of());
    }

    // ------------------------------------------------------------------------------------------------ SyncGroup

    /** A SyncGroup to the consumer group: the member's assignment, or the error. */
    public CompletableFuture<SyncGroupResponseData> sync(SyncGroupRequestData request) {
        ConsumerGroup group = manager.groupOrNull(request.groupId());
        try {
            if (group == null || group.numMembers() == 0) {
                throw Errors.UNKNOWN_MEMBER_ID.exception("Group " + request.groupId() + " has no members.");
            }
            ConsumerGroupMember member = classicMember(group, request.memberId(), request.groupInstanceId());
            checkGeneration(member, request.generationId());
            String protocolName = member.classicMetadata().protocol().name();
            if (request.protocolType() != null && !PROTOCOL_TYPE.equals(request.protocolType())) {
                throw Errors.INCONSISTENT_GROUP_PROTOCOL.exception("The protocol type " + request.protocolType()
                    + " from member " + member.memberId() + " request is not equal to the group protocol type "
                    + PROTOCOL_TYPE + ".");
            }
            if (request.protocolName() != null && !protocolName.equals(request.protocolName())) {
                throw Errors.INCONSISTENT_GROUP_PROTOCOL.exception("The protocol name " + request.protocolName()
                    + " from member " + member.memberId() + " request is not equal to the protocol name "
                    + protocolName + " returned in the join response.");
            }
            if (group.groupEpoch() > member.memberEpoch() && member.state() != MemberState.UNREVOKED_PARTITIONS) {
                scheduleJoinTimeoutIfAbsent(group.groupId(), member.memberId(), member.rebalanceTimeoutMs());
                throw Errors.REBALANCE_IN_PROGRESS.exception("A new rebalance is triggered in group "
                    + group.groupId() + " and member " + member.memberId() + " should rejoin to catch up.");
            }
            ctx.cancel(syncKey(group.groupId(), member.memberId()));
            manager.scheduleSessionTimeout(group.groupId(), member.memberId());
            byte[] assignment = EmbeddedConsumerProtocol.serializeAssignment(member.assignedPartitions(),
                topics.get(), EmbeddedConsumerProtocol.version(member.classicMetadata().protocol().metadata()));
            return CompletableFuture.completedFuture(new SyncGroupResponseData()
                .setProtocolType(request.protocolType()).setProtocolName(request.protocolName())
                .setAssignment(assignment));
        } catch (ApiException e) {
            return CompletableFuture.completedFuture(new SyncGroupResponseData()
                .setErrorCode(Errors.forException(e).code()).setProtocolType(null).setProtocolName(null)
                .setAssignment(new byte[0]));
        }
    }

    // ------------------------------------------------------------------------------------------------ Heartbeat

    /** A Heartbeat to the consumer group: NONE, REBALANCE_IN_PROGRESS when the member must rejoin, or the error. */
    public CompletableFuture<HeartbeatResponseData> heartbeat(HeartbeatRequestData request) {
        Errors error;
        ConsumerGroup group = manager.groupOrNull(request.groupId());
        try {
            if (group == null) {
                throw Errors.UNKNOWN_MEMBER_ID.exception("Group " + request.groupId() + " not found.");
            }
            ConsumerGroupMember member = classicMember(group, request.memberId(), request.groupInstanceId());
            checkGeneration(member, request.generationId());
            manager.scheduleSessionTimeout(group.groupId(), member.memberId());
            // The member rejoins when the group epoch moved, it must revoke partitions, or partitions it waits for
            // were released.
            boolean rejoin = member.memberEpoch() < group.groupEpoch()
                || member.state() == MemberState.UNREVOKED_PARTITIONS
                || (member.state() == MemberState.UNRELEASED_PARTITIONS && !group.waitsOnUnreleasedPartition(member));
            if (rejoin) {
                scheduleJoinTimeoutIfAbsent(group.groupId(), member.memberId(), member.rebalanceTimeoutMs());
            }
            error = rejoin ? Errors.REBALANCE_IN_PROGRESS : Errors.NONE;
        } catch (ApiException e) {
            error = Errors.forException(e);
        }
        return CompletableFuture.completedFuture(new HeartbeatResponseData().setErrorCode(error.code()));
    }

    // ----------------------------------------------------------------------------------------------- LeaveGroup

    /** A LeaveGroup of {@code version} to the consumer group: each member speaking the classic protocol leaves. */
    public CompletableFuture<LeaveGroupResponseData> leave(LeaveGroupRequestData request, short version) {
        String groupId = request.groupId();
        ConsumerGroup group = manager.groupOrNull(groupId);
        if (group == null) {
            return CompletableFuture.completedFuture(new LeaveGroupResponseData()
                .setErrorCode(Errors.UNKNOWN_MEMBER_ID.code()));
        }
        List<LeaveGroupRequestData.MemberIdentity> identities = version >= 3 ? request.members()
            : List.of(new LeaveGroupRequestData.MemberIdentity().setMemberId(request.memberId()));
        ConsumerGroupManager.Snapshot before = manager.snapshot(groupId);
        List<CoordinatorRecord> records = new ArrayList<>();
        List<LeaveGroupResponseData.MemberResponse> responses = new ArrayList<>();
        for (LeaveGroupRequestData.MemberIdentity identity : identities) {
            String memberId = identity.memberId() == null ? NO_MEMBER_ID : identity.memberId();
            String instanceId = identity.groupInstanceId();
            Errors error = Errors.NONE;
            try {
                ConsumerGroupMember member = leavingMember(group, memberId, instanceId);
                memberId = member.memberId();
                LOGGER.info("[GroupId {}] Member {}{} has left the group through an explicit LeaveGroup; client"
                    + " reason: {}", groupId, memberId, instanceId == null ? "" : " with instance id " + instanceId,
                    identity.reason() == null ? "not provided" : identity.reason());
                records.addAll(ConsumerGroupRecords.memberTombstones(groupId, memberId));
                group.removeMember(memberId);
                manager.cancelTimers(groupId, memberId);
            } catch (ApiException e) {
                error = Errors.forException(e);
            }
            responses.add(new LeaveGroupResponseData.MemberResponse().setMemberId(memberId)
                .setGroupInstanceId(instanceId).setErrorCode(error.code()));
        }
        LeaveGroupResponseData response = new LeaveGroupResponseData().setMembers(responses);
        if (version < 3) {
            response = new LeaveGroupResponseData().setErrorCode(responses.get(0).errorCode());
        }
        if (records.isEmpty()) {
            return CompletableFuture.completedFuture(response);
        }
        manager.refreshSubscriptionMetadata(group);
        group.setGroupEpoch(group.groupEpoch() + 1);
        records.add(ConsumerGroupRecords.groupEpoch(groupId, group.groupEpoch()));
        LOGGER.info("[GroupId {}] Bumped group epoch to {}.", groupId, group.groupEpoch());
        LeaveGroupResponseData answer = response;
        return manager.writeChange(before, records).handle((ignored, failure) -> failure == null ? answer
            : new LeaveGroupResponseData().setErrorCode(CoordinatorWriteErrors.operationError(failure).code()));
    }

    private static ConsumerGroupMember leavingMember(ConsumerGroup group, String memberId, String instanceId) {
        if (instanceId == null) {
            return classicMember(group, memberId, null);
        }
        String existingId = group.staticMemberId(instanceId);
        if (existingId == null) {
            throw Errors.UNKNOWN_MEMBER_ID.exception("Instance id " + instanceId + " is unknown.");
        }
        // An administrative removal names the instance id alone.
        return classicMember(group, memberId.isEmpty() ? existingId : memberId, instanceId);
    }

    // ------------------------------------------------------------------------------------------------- checks

    /** Kafka's validateConsumerGroupMember and throwIfMemberDoesNotUseClassicProtocol. */
    private static ConsumerGroupMember classicMember(ConsumerGroup group, String memberId, String instanceId) {
        ConsumerGroupMember member;
        if (instanceId == null) {
            member = memberId == null ? null : group.member(memberId);
            if (member == null) {
                throw Errors.UNKNOWN_MEMBER_ID.exception("Member " + memberId + " is not a member of group "
                    + group.groupId() + ".");
            }
        } else {
            String existingId = group.staticMemberId(instanceId);
            member = existingId == null ? null : group.member(existingId);
            if (member == null) {
                throw Errors.UNKNOWN_MEMBER_ID.exception("Member with instance id " + instanceId + " is not a member"
                    + " of group " + group.groupId() + ".");
            }
            if (!member.memberId().equals(memberId)) {
                throw Errors.FENCED_INSTANCE_ID.exception("Static member " + memberId + " with instance id "
                    + instanceId + " was fenced by member " + member.memberId() + ".");
            }
        }
        if (!member.useClassicProtocol()) {
            throw Errors.UNKNOWN_MEMBER_ID.exception("Member " + member.memberId() + " does not use the classic"
                + " protocol.");
        }
        return member;
    }

    private static void checkGeneration(ConsumerGroupMember member, int generationId) {
        if (member.memberEpoch() != generationId) {
            throw Errors.ILLEGAL_GENERATION.exception("The request generation id " + generationId + " is not equal"
                + " to the member epoch " + member.memberEpoch() + " of member " + member.memberId() + ".");
        }
    }

    // ------------------------------------------------------------------------------------------------- timers

    private void scheduleJoinTimeoutIfAbsent(String groupId, String memberId, int timeoutMs) {
        String key = joinKey(groupId, memberId);
        if (!joinTimers.add(key)) {
            return;
        }
        ctx.schedule(key, Math.max(1, timeoutMs), () -> {
            joinTimers.remove(key);
            fence(groupId, memberId, "the classic member failed to join within the rebalance timeout");
        });
    }

    private void cancelJoinTimer(String groupId, String memberId) {
        String key = joinKey(groupId, memberId);
        if (joinTimers.remove(key)) {
            ctx.cancel(key);
        }
    }

    private void scheduleSyncTimeout(String groupId, String memberId, int timeoutMs) {
        ctx.schedule(syncKey(groupId, memberId), Math.max(1, timeoutMs),
            () -> fence(groupId, memberId, "the member failed to sync within the rebalance timeout"));
    }

    private void fence(String groupId, String memberId, String reason) {
        ConsumerGroup group = manager.groupOrNull(groupId);
        ConsumerGroupMember member = group == null ? null : group.member(memberId);
        if (member != null) {
            LOGGER.info("[GroupId {}] Member {} fenced from the group because {}.", groupId, memberId, reason);
            manager.fenceOnTimer(group, member);
        }
    }

    /** Cancels the member's join and sync timers (it left or was removed). */
    void cancelTimers(String groupId, String memberId) {
        cancelJoinTimer(groupId, memberId);
        ctx.cancel(syncKey(groupId, memberId));
    }

    static String joinKey(String groupId, String memberId) {
        return "consumer-classic-join-" + groupId.length() + "-" + groupId + "-" + memberId;
    }

    static String syncKey(String groupId, String memberId) {
        return "consumer-classic-sync-" + groupId.length() + "-" + groupId + "-" + memberId;
    }

    /** The shard is lost: the timers stop with it. */
    void unload() {
        joinTimers.clear();
    }
}
