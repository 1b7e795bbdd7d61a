package io.cairn.broker.group;

import io.cairn.broker.coordinator.ShardContext;
import io.cairn.broker.group.record.GroupMetadataValue;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.DescribeGroupsResponseData;
import io.cairn.wire.message.HeartbeatRequestData;
import io.cairn.wire.message.HeartbeatResponseData;
import io.cairn.wire.message.JoinGroupRequestData;
import io.cairn.wire.message.JoinGroupResponseData;
import io.cairn.wire.message.LeaveGroupRequestData;
import io.cairn.wire.message.LeaveGroupResponseData;
import io.cairn.wire.message.ListGroupsResponseData;
import io.cairn.wire.message.SyncGroupRequestData;
import io.cairn.wire.message.SyncGroupResponseData;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;

/**
 * The classic consumer-group protocol of one coordinator shard (Kafka's classic group coordinator): JoinGroup,
 * SyncGroup, Heartbeat and LeaveGroup drive each {@link ClassicGroup} through its rebalances, the leader's assignment
 * is stored as the group's metadata record before it is handed out, members whose session runs out are removed;
 * it also answers DescribeGroups and ListGroups and the group-side checks of the offset APIs, and rebuilds its groups
 * from their records when the shard loads.
 *
 * <p>Thread-safety: none needed and none provided: every method, timer task and write completion runs on the
 * shard's thread, one coordinator thread at a time ({@link ShardContext}).
 */
public final class ClassicGroupManager {

    /** How long a new member's parked JoinGroup may wait before it is expired (Kafka's 5 minutes). */
    static final int NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000;
    /** The group type ListGroups reports for these groups. */
    public static final String GROUP_TYPE = "classic";

    private static final Logger LOGGER = LogManager.getLogger(ClassicGroupManager.class);
    private static final byte[] EMPTY_ASSIGNMENT = new byte[0];
    private static final String NO_MEMBER_ID = "";

    private final ShardContext<CoordinatorRecord> ctx;
    private final GroupConfig config;
    private final Map<String, ClassicGroup> groups = new HashMap<>();
    private final Set<String> timerKeys = new HashSet<>();
    private final GroupCounters counters;

    /** @param counters counts the rebalances completed, shared by the coordinator's shards */
    public ClassicGroupManager(ShardContext<CoordinatorRecord> ctx, GroupConfig config, GroupCounters counters) {
        this.ctx = ctx;
        this.config = config;
        this.counters = counters;
    }

    // ---------------------------------------------------------------------------------------------- JoinGroup

    /**
     * Handles a JoinGroup: the future completes (on the coordinator thread) when the member may proceed: at once
     * for an error, MEMBER_ID_REQUIRED or a member that need not wait, else when the rebalance completes.
     */
    public CompletableFuture<JoinGroupResponseData> join(ClientInfo client, JoinGroupRequestData request,
                                                         short version) {
        CompletableFuture<JoinGroupResponseData> future = new CompletableFuture<>();
        try {
            if (version == 0) {
                // Version 0 has no rebalance timeout: the session timeout serves as both, as in Kafka.
                request.setRebalanceTimeoutMs(request.sessionTimeoutMs());
            }
            doJoin(client, request, version, future);
        } catch (RuntimeException e) {
            LOGGER.error("JoinGroup of group {} failed", request.groupId(), e);
            future.completeExceptionally(e);
        }
        return future.thenApply(response -> adaptJoinResponse(response, version));
    }

    private static JoinGroupResponseData adaptJoinResponse(JoinGroupResponseData response, short version) {
        if (version < 7 && response.protocolName() == null) {
            response.setProtocolName("");
        }
        if (response.leader() == null) {
            response.setLeader("");
        }
        if (response.memberId() == null) {
            response.setMemberId(NO_MEMBER_ID);
        }
        if (version < 9) {
            response.setSkipAssignment(false);
        }
        return response;
    }

    private void doJoin(ClientInfo client, JoinGroupRequestData request, short version,
                        CompletableFuture<JoinGroupResponseData> future) {
        String groupId = request.groupId();
        String memberId = request.memberId() == null ? NO_MEMBER_ID : request.memberId();
        if (isInvalidGroupId(groupId)) {
            future.complete(joinError(memberId, Errors.INVALID_GROUP_ID));
            return;
        }
        if (request.sessionTimeoutMs() < config.minSessionTimeoutMs()
                || request.sessionTimeoutMs() > config.maxSessionTimeoutMs()) {
            future.complete(joinError(memberId, Errors.INVALID_SESSION_TIMEOUT));
            return;
        }
        boolean unknownMember = memberId.isEmpty();
        ClassicGroup group = groups.get(groupId);
        if (group == null) {
            if (!unknownMember) {
                future.complete(joinError(memberId, Errors.UNKNOWN_MEMBER_ID));
                return;
            }
            group = new ClassicGroup(groupId, ctx.nowMs());
            groups.put(groupId, group);
            writeEmptyGroup(group);
        }
        if (!acceptJoiningMember(group, memberId)) {
            group.remove(memberId);
            cancelTimer(heartbeatKey(groupId, memberId));
            future.complete(joinError(NO_MEMBER_ID, Errors.GROUP_MAX_SIZE_REACHED));
        } else if (unknownMember) {
            joinNewMember(client, request, version, group, future);
        } else {
            joinExistingMember(client, request, group, future);
        }
    }

    /** A new group is committed to the log at once as an empty generation 0, as Kafka does. */
    private void writeEmptyGroup(ClassicGroup group) {
        GroupMetadataValue value = new GroupMetadataValue().setProtocolType("").setGeneration(0).setProtocol(null)
                .setLeader(null).setCurrentStateTimestamp(group.stateTimestampMs()).setMembers(new ArrayList<>());
        write(List.of(CoordinatorRecord.group(group.groupId(), value))).whenComplete((ignored, error) -> {
            if (error != null) {
                LOGGER.warn("Failed to write the empty metadata of new group {}: {}", group.groupId(),
                        Errors.forException(error));
            }
        });
    }

    private boolean acceptJoiningMember(ClassicGroup group, String memberId) {
        return switch (group.state()) {
            case EMPTY, DEAD -> true;
            // The number of members awaiting join (not the group size, which may exceed a lowered maximum) lets
            // the last members to rejoin be the ones turned away.
            case PREPARING_REBALANCE -> (group.hasMember(memberId) && group.member(memberId).isAwaitingJoin())
                    || group.numAwaitingJoin() < config.maxGroupSize();
            case COMPLETING_REBALANCE, STABLE -> group.hasMember(memberId)
                    || group.numMembers() < config.maxGroupSize();
        };
    }

    private void joinNewMember(ClientInfo client, JoinGroupRequestData request, short version, ClassicGroup group,
                               CompletableFuture<JoinGroupResponseData> future) {
        Map<String, byte[]> protocols = ClassicGroupMember.protocolMap(request.protocols());
        if (group.isInState(ClassicGroupState.DEAD)) {
            future.complete(joinError(NO_MEMBER_ID, Errors.COORDINATOR_NOT_AVAILABLE));
            return;
        }
        if (!group.supportsProtocols(request.protocolType(), protocols.keySet())) {
            future.complete(joinError(NO_MEMBER_ID, Errors.INCONSISTENT_GROUP_PROTOCOL));
            return;
        }
        String instanceId = request.groupInstanceId();
        String newMemberId = ClassicGroup.newMemberId(client.clientId(), instanceId);
        if (instanceId != null) {
            String existing = group.staticMemberId(instanceId);
            if (existing != null) {
                LOGGER.info("Static member with group instance id {} and unknown member id joins group {} in state"
                        + " {}; replacing its previous member id {} with {}", instanceId, group.groupId(),
                        group.state(), existing, newMemberId);
                rejoinStaticMember(request, version, group, existing, newMemberId, protocols, future);
            } else {
                LOGGER.info("Static member with group instance id {} and unknown member id joins group {} in state"
                        + " {}; new member id {}", instanceId, group.groupId(), group.state(), newMemberId);
                addMemberThenRebalanceOrCompleteJoin(client, request, group, newMemberId, protocols, future);
            }
        } else if (version >= 4) {
            LOGGER.info("Dynamic member with unknown member id joins group {} in state {}; created member id {} and"
                    + " asking it to rejoin with it", group.groupId(), group.state(), newMemberId);
            group.addPendingMember(newMemberId);
            String groupId = group.groupId();
            scheduleTimer(heartbeatKey(groupId, newMemberId), request.sessionTimeoutMs(),
                    () -> expireHeartbeat(group, newMemberId));
            future.complete(joinError(newMemberId, Errors.MEMBER_ID_REQUIRED));
        } else {
            LOGGER.info("Dynamic member with unknown member id joins group {} in state {}; added as {}",
                    group.groupId(), group.state(), newMemberId);
            addMemberThenRebalanceOrCompleteJoin(client, request, group, newMemberId, protocols, future);
        }
    }

    private void joinExistingMember(ClientInfo client, JoinGroupRequestData request, ClassicGroup group,
                                    CompletableFuture<JoinGroupResponseData> future) {
        String memberId = request.memberId();
        Map<String, byte[]> protocols = ClassicGroupMember.protocolMap(request.protocols());
        if (group.isInState(ClassicGroupState.DEAD)) {
            future.complete(joinError(memberId, Errors.COORDINATOR_NOT_AVAILABLE));
            return;
        }
        if (!group.supportsProtocols(request.protocolType(), protocols.keySet())) {
            future.complete(joinError(memberId, Errors.INCONSISTENT_GROUP_PROTOCOL));
            return;
        }
        if (group.isPendingMember(memberId)) {
            if (request.groupInstanceId() != null) {
                // Pending members are dynamic; a static id on a pending member id is an inconsistent request.
                future.complete(joinError(memberId, Errors.FENCED_INSTANCE_ID));
                return;
            }
            LOGGER.debug("Pending member {} joins group {} in state {}", memberId, group.groupId(), group.state());
            addMemberThenRebalanceOrCompleteJoin(client, request, group, memberId, protocols, future);
            return;
        }
        Errors error = group.validateMember(memberId, request.groupInstanceId());
        if (error != Errors.NONE) {
            future.complete(joinError(memberId, error).setProtocolName(null));
            return;
        }
        ClassicGroupMember member = group.member(memberId);
        String reason = joinReason(request);
        switch (group.state()) {
            case PREPARING_REBALANCE -> updateMemberThenRebalanceOrCompleteJoin(request, group, member, protocols,
                    "Member " + memberId + " is joining group during " + group.state() + "; client reason: "
                            + reason, future);
            case COMPLETING_REBALANCE -> {
                if (member.matches(protocols)) {
                    // Same metadata: it probably missed its JoinGroup response; answer with the current generation.
                    future.complete(currentGenerationResponse(group, memberId, group.isLeader(memberId)));
                } else {
                    updateMemberThenRebalanceOrCompleteJoin(request, group, member, protocols, "Updating metadata"
                            + " for member " + memberId + " during " + group.state() + "; client reason: " + reason,
                            future);
                }
            }
            case STABLE -> {
                if (group.isLeader(memberId)) {
                    // A leader's JoinGroup forces a rebalance: it lets the leader react to changes the member
                    // metadata does not show (such as new partitions).
                    updateMemberThenRebalanceOrCompleteJoin(request, group, member, protocols, "Leader " + memberId
                            + " re-joining group during " + group.state() + "; client reason: " + reason, future);
                } else if (!member.matches(protocols)) {
                    updateMemberThenRebalanceOrCompleteJoin(request, group, member, protocols, "Updating metadata"
                            + " for member " + memberId + " during " + group.state() + "; client reason: " + reason,
                            future);
                } else {
                    future.complete(currentGenerationResponse(group, memberId, false));
                }
            }
            default -> {
                LOGGER.warn("Member {} rejoins group {} in unexpected state {}", memberId, group.groupId(),
                        group.state());
                future.complete(joinError(memberId, Errors.UNKNOWN_MEMBER_ID));
            }
        }
    }

    private static JoinGroupResponseData currentGenerationResponse(ClassicGroup group, String memberId,
                                                                   boolean withMembers) {
        return new JoinGroupResponseData()
                .setMembers(withMembers ? group.leaderMemberList() : new ArrayList<>())
                .setMemberId(memberId)
                .setGenerationId(group.generationId())
                .setProtocolName(group.protocolName())
                .setProtocolType(group.protocolType())
                .setLeader(group.leaderId())
                .setSkipAssignment(false);
    }

    private static JoinGroupResponseData joinError(String memberId, Errors error) {
        return new JoinGroupResponseData().setMemberId(memberId).setErrorCode(error.code());
    }

    private static String joinReason(JoinGroupRequestData request) {
        return request.reason() == null || request.reason().isEmpty() ? "not provided" : request.reason();
    }

    private void addMemberThenRebalanceOrCompleteJoin(ClientInfo client, JoinGroupRequestData request,
                                                      ClassicGroup group, String memberId,
                                                      Map<String, byte[]> protocols,
                                                      CompletableFuture<JoinGroupResponseData> future) {
        ClassicGroupMember member = new ClassicGroupMember(memberId, request.groupInstanceId(),
                client.clientId(), client.clientHost(),
                request.rebalanceTimeoutMs(), request.sessionTimeoutMs(), request.protocolType(), protocols);
        member.setNew(true);
        if (group.isInState(ClassicGroupState.PREPARING_REBALANCE)
                && group.previousState() == ClassicGroupState.EMPTY) {
            // Lets the initial rebalance wait a little longer for more members.
            group.setNewMemberAdded(true);
        }
        group.add(member, future);
        // A new member cannot heartbeat while its JoinGroup is parked: its join expires after a generous timeout
        // instead, so defunct new members (clients that gave up and retried) do not pile up.
        rescheduleHeartbeat(group, member, NEW_MEMBER_JOIN_TIMEOUT_MS);
        maybePrepareRebalanceOrCompleteJoin(group, "Adding new member " + memberId + " with group instance id "
                + request.groupInstanceId() + "; client reason: " + joinReason(request));
    }

    private void updateMemberThenRebalanceOrCompleteJoin(JoinGroupRequestData request, ClassicGroup group,
                                                         ClassicGroupMember member, Map<String, byte[]> protocols,
                                                         String reason,
                                                         CompletableFuture<JoinGroupResponseData> future) {
        CompletableFuture<JoinGroupResponseData> replaced = group.updateMember(member, protocols,
                request.rebalanceTimeoutMs(), request.sessionTimeoutMs(), future);
        if (replaced != null) {
            // The member resent its JoinGroup; the earlier call is answered so that it does not hang.
            replaced.complete(joinError(member.memberId(), Errors.REBALANCE_IN_PROGRESS));
        }
        maybePrepareRebalanceOrCompleteJoin(group, reason);
    }

    /**
     * A known static member rejoins with an unknown member id (it restarted): its new member id replaces the old
     * one, which is fenced. In Stable, if the protocol the group would choose does not change, no rebalance is
     * needed: the group is stored with the new member id and the member gets the current generation (from
     * JoinGroup v9 a rejoining leader is told to skip the assignment); otherwise the group rebalances.
     */
    private void rejoinStaticMember(JoinGroupRequestData request, short version, ClassicGroup group,
                                    String oldMemberId, String newMemberId, Map<String, byte[]> protocols,
                                    CompletableFuture<JoinGroupResponseData> future) {
        String instanceId = request.groupInstanceId();
        String previousLeader = group.leaderId();
        cancelTimer(heartbeatKey(group.groupId(), oldMemberId));
        ClassicGroupMember member = group.replaceStaticMember(instanceId, oldMemberId, newMemberId);
        rescheduleHeartbeat(group, member, member.sessionTimeoutMs());
        int oldRebalanceTimeoutMs = member.rebalanceTimeoutMs();
        int oldSessionTimeoutMs = member.sessionTimeoutMs();
        Map<String, byte[]> oldProtocols = member.protocols();
        group.updateMember(member, protocols, request.rebalanceTimeoutMs(), request.sessionTimeoutMs(), future);
        String reason = joinReason(request);
        switch (group.state()) {
            case STABLE -> {
                if (!Objects.equals(group.selectProtocol(), group.protocolName())) {
                    maybePrepareRebalanceOrCompleteJoin(group, "Group's selected protocol will change because"
                            + " static member " + newMemberId + " with instance id " + instanceId
                            + " joined with a change of protocol; client reason: " + reason);
                    return;
                }
                LOGGER.info("Static member {} of group {} rejoins during Stable without changing the selected"
                        + " protocol: no rebalance", instanceId, group.groupId());
                int generation = group.generationId();
                GroupMetadataValue value = group.toRecordValue(null, ctx.nowMs());
                write(List.of(CoordinatorRecord.group(group.groupId(), value))).whenComplete((ignored, error) -> {
                    if (!isLive(group) || !group.isInState(ClassicGroupState.STABLE)
                            || group.generationId() != generation || group.member(newMemberId) != member
                            || !member.isAwaitingJoin()) {
                        return;
                    }
                    if (error != null) {
                        Errors mapped = mapWriteError(Errors.forException(error));
                        LOGGER.warn("Failed to store static member {} of group {} with member id {}: {}; reverting"
                                + " to member id {}", instanceId, group.groupId(), newMemberId, mapped, oldMemberId);
                        CompletableFuture<JoinGroupResponseData> parked = member.awaitingJoin();
                        group.updateMember(member, oldProtocols, oldRebalanceTimeoutMs, oldSessionTimeoutMs, null);
                        cancelTimer(heartbeatKey(group.groupId(), newMemberId));
                        ClassicGroupMember restored = group.replaceStaticMember(instanceId, newMemberId, oldMemberId);
                        rescheduleHeartbeat(group, restored, restored.sessionTimeoutMs());
                        parked.complete(new JoinGroupResponseData().setMemberId(NO_MEMBER_ID)
                                .setGenerationId(group.generationId()).setProtocolType(group.protocolType())
                                .setProtocolName(group.protocolName()).setLeader(previousLeader)
                                .setErrorCode(mapped.code()));
                    } else if (version >= 9) {
                        boolean leader = group.isLeader(newMemberId);
                        group.completeJoin(member, currentGenerationResponse(group, newMemberId, leader)
                                .setSkipAssignment(leader));
                    } else {
                        group.completeJoin(member, currentGenerationResponse(group, newMemberId, false)
                                .setLeader(previousLeader));
                    }
                });
            }
            // The old member id may already be in the leader's assignment: only a new rebalance gives the new id
            // its share.
            case COMPLETING_REBALANCE -> prepareRebalance(group, "Updating metadata for static member "
                    + newMemberId + " with instance id " + instanceId + "; client reason: " + reason);
            case PREPARING_REBALANCE -> maybeCompleteJoinPhase(group);
            default -> throw new IllegalStateException("Group " + group.groupId() + " in state " + group.state()
                    + " cannot have the static member " + instanceId);
        }
    }

    // ------------------------------------------------------------------------------------------- rebalancing

    private void maybePrepareRebalanceOrCompleteJoin(ClassicGroup group, String reason) {
        if (group.canRebalance()) {
            prepareRebalance(group, reason);
        } else {
            maybeCompleteJoinPhase(group);
        }
    }

    private void prepareRebalance(ClassicGroup group, String reason) {
        if (group.isInState(ClassicGroupState.COMPLETING_REBALANCE)) {
            resetAndPropagateAssignmentWithError(group, Errors.REBALANCE_IN_PROGRESS);
        }
        cancelTimer(syncKey(group.groupId()));
        boolean initialRebalance = group.isInState(ClassicGroupState.EMPTY);
        ClassicGroupState from = group.state();
        group.transitionTo(ClassicGroupState.PREPARING_REBALANCE, ctx.nowMs());
        LOGGER.info("Preparing to rebalance group {} in state {} with old generation {} (reason: {})",
                group.groupId(), from, group.generationId(), reason);
        if (initialRebalance) {
            // A group joined while Empty waits a little for more members (group.initial.rebalance.delay.ms).
            int delayMs = config.initialRebalanceDelayMs();
            int remainingMs = Math.max(group.rebalanceTimeoutMs() - delayMs, 0);
            scheduleTimer(joinKey(group.groupId()), delayMs,
                    () -> tryCompleteInitialRebalance(group, delayMs, remainingMs));
        } else {
            maybeCompleteJoinElseSchedule(group);
        }
    }

    private void maybeCompleteJoinElseSchedule(ClassicGroup group) {
        if (group.hasAllMembersJoined()) {
            completeJoin(group);
        } else {
            scheduleTimer(joinKey(group.groupId()), group.rebalanceTimeoutMs(), () -> completeJoinOnTimeout(group));
        }
    }

    private void completeJoinOnTimeout(ClassicGroup group) {
        if (isLive(group) && group.isInState(ClassicGroupState.PREPARING_REBALANCE)) {
            completeJoin(group);
        }
    }

    private void tryCompleteInitialRebalance(ClassicGroup group, int delayMs, int remainingMs) {
        if (!isLive(group) || !group.isInState(ClassicGroupState.PREPARING_REBALANCE)) {
            return;
        }
        if (group.newMemberAdded() && remainingMs != 0) {
            // A member joined during the delay: wait once more, within the rebalance timeout.
            group.setNewMemberAdded(false);
            int newDelayMs = Math.min(config.initialRebalanceDelayMs(), remainingMs);
            int newRemainingMs = Math.max(remainingMs - delayMs, 0);
            scheduleTimer(joinKey(group.groupId()), newDelayMs,
                    () -> tryCompleteInitialRebalance(group, newDelayMs, newRemainingMs));
        } else {
            completeJoin(group);
        }
    }

    private void maybeCompleteJoinPhase(ClassicGroup group) {
        if (group.isInState(ClassicGroupState.PREPARING_REBALANCE) && group.hasAllMembersJoined()
                && group.previousState() != ClassicGroupState.EMPTY) {
            completeJoin(group);
        }
    }

    /**
     * Ends the join phase: dynamic members that did not rejoin are removed, a leader is chosen among those that
     * did, the next generation starts and every parked JoinGroup is answered (the leader with the member list);
     * a group left without members becomes Empty and is stored so.
     */
    private void completeJoin(ClassicGroup group) {
        String groupId = group.groupId();
        cancelTimer(joinKey(groupId));
        List<String> removed = new ArrayList<>();
        for (ClassicGroupMember member : group.notYetRejoinedMembers()) {
            if (!member.isStatic()) {
                group.remove(member.memberId());
                cancelTimer(heartbeatKey(groupId, member.memberId()));
                failParkedCalls(group, member, Errors.UNKNOWN_MEMBER_ID);
                removed.add(member.memberId());
            }
        }
        if (!removed.isEmpty()) {
            LOGGER.info("Group {} removed dynamic members who did not rejoin: {}", groupId, removed);
        }
        if (group.isInState(ClassicGroupState.DEAD)) {
            LOGGER.info("Group {} is dead, skipping the rebalance", groupId);
            return;
        }
        if (!group.maybeElectNewJoinedLeader() && group.numMembers() > 0) {
            // Only static members that did not rejoin are left: wait for them or for their sessions to expire.
            LOGGER.error("Group {} could not complete its rebalance because no member rejoined", groupId);
            scheduleTimer(joinKey(groupId), group.rebalanceTimeoutMs(), () -> completeJoinOnTimeout(group));
            return;
        }
        group.initNextGeneration(ctx.nowMs());
        if (group.isInState(ClassicGroupState.EMPTY)) {
            LOGGER.info("Group {} with generation {} is now empty", groupId, group.generationId());
            GroupMetadataValue value = group.toRecordValue(Map.of(), ctx.nowMs());
            write(List.of(CoordinatorRecord.group(groupId, value))).whenComplete((ignored, error) -> {
                if (error != null) {
                    // The previous generation stays in the log; its members are gone and will time out.
                    LOGGER.warn("Failed to write the empty metadata of group {}: {}", groupId,
                            mapWriteError(Errors.forException(error)));
                }
            });
            return;
        }
        LOGGER.info("Stabilized group {} generation {} with {} members", groupId, group.generationId(),
                group.numMembers());
        for (ClassicGroupMember member : new ArrayList<>(group.members())) {
            JoinGroupResponseData response = currentGenerationResponse(group, member.memberId(),
                    group.isLeader(member.memberId()));
            group.completeJoin(member, response);
            rescheduleHeartbeat(group, member, member.sessionTimeoutMs());
            member.setNew(false);
            group.addPendingSyncMember(member.memberId());
        }
        int generation = group.generationId();
        scheduleTimer(syncKey(groupId), group.rebalanceTimeoutMs(), () -> expirePendingSync(group, generation));
    }

    /** Members that got their JoinGroup response but sent no SyncGroup within the rebalance timeout are removed. */
    private void expirePendingSync(ClassicGroup group, int generation) {
        if (!isLive(group) || group.generationId() != generation) {
            return;
        }
        if ((group.isInState(ClassicGroupState.COMPLETING_REBALANCE) || group.isInState(ClassicGroupState.STABLE))
                && !group.hasReceivedSyncFromAllMembers()) {
            Set<String> pending = new TreeSet<>(group.pendingSyncMembers());
            for (String memberId : pending) {
                ClassicGroupMember member = group.member(memberId);
                group.remove(memberId);
                cancelTimer(heartbeatKey(group.groupId(), memberId));
                if (member != null) {
                    failParkedCalls(group, member, Errors.UNKNOWN_MEMBER_ID);
                }
            }
            prepareRebalance(group, "Removing " + pending + " on pending sync request expiration");
        }
    }

    private void resetAndPropagateAssignmentWithError(ClassicGroup group, Errors error) {
        for (ClassicGroupMember member : group.members()) {
            member.setAssignment(EMPTY_ASSIGNMENT);
        }
        propagateAssignment(group, error);
    }

    private void propagateAssignment(ClassicGroup group, Errors error) {
        String protocolType = error == Errors.NONE ? group.protocolType() : null;
        String protocolName = error == Errors.NONE ? group.protocolName() : null;
        for (ClassicGroupMember member : new ArrayList<>(group.members())) {
            SyncGroupResponseData response = new SyncGroupResponseData().setProtocolType(protocolType)
                    .setProtocolName(protocolName).setAssignment(member.assignment()).setErrorCode(error.code());
            if (group.completeSync(member, response)) {
                // A session that ran out while the member waited for the assignment was ignored: restart it.
                rescheduleHeartbeat(group, member, member.sessionTimeoutMs());
            }
        }
    }

    /** Answers a removed member's parked JoinGroup and SyncGroup so that they do not hang. */
    private static void failParkedCalls(ClassicGroup group, ClassicGroupMember member, Errors error) {
        CompletableFuture<JoinGroupResponseData> join = member.awaitingJoin();
        if (join != null) {
            member.setAwaitingJoin(null);
            join.complete(joinError(NO_MEMBER_ID, error));
        }
        group.completeSync(member, new SyncGroupResponseData().setErrorCode(error.code()));
    }

    // -------------------------------------------------------------------------------------------- sessions

    private void rescheduleHeartbeat(ClassicGroup group, ClassicGroupMember member, int timeoutMs) {
        String memberId = member.memberId();
        scheduleTimer(heartbeatKey(group.groupId(), memberId), timeoutMs, () -> expireHeartbeat(group, memberId));
    }

    private void expireHeartbeat(ClassicGroup group, String memberId) {
        if (!isLive(group) || group.isInState(ClassicGroupState.DEAD)) {
            return;
        }
        if (group.isPendingMember(memberId)) {
            LOGGER.info("Pending member {} of group {} did not rejoin within its session timeout: removed", memberId,
                    group.groupId());
            group.remove(memberId);
            if (group.isInState(ClassicGroupState.PREPARING_REBALANCE) && group.hasAllMembersJoined()) {
                completeJoin(group);
            }
            return;
        }
        ClassicGroupMember member = group.member(memberId);
        if (member == null || member.hasSatisfiedHeartbeat()) {
            return;
        }
        LOGGER.info("Member {} of group {} has failed (session timeout), removing it from the group", memberId,
                group.groupId());
        removeMemberAndUpdateGroup(group, member, "removing member " + memberId + " on heartbeat expiration");
    }

    private void removeMemberAndUpdateGroup(ClassicGroup group, ClassicGroupMember member, String reason) {
        // A new member may time out with its JoinGroup parked: UNKNOWN_MEMBER_ID makes a live client join again.
        group.completeJoin(member, joinError(NO_MEMBER_ID, Errors.UNKNOWN_MEMBER_ID));
        group.completeSync(member, new SyncGroupResponseData().setErrorCode(Errors.UNKNOWN_MEMBER_ID.code()));
        group.remove(member.memberId());
        if (group.isInState(ClassicGroupState.STABLE) || group.isInState(ClassicGroupState.COMPLETING_REBALANCE)) {
            maybePrepareRebalanceOrCompleteJoin(group, reason);
        } else if (group.isInState(ClassicGroupState.PREPARING_REBALANCE) && group.hasAllMembersJoined()) {
            completeJoin(group);
        }
    }

    // ---------------------------------------------------------------------------------------------- SyncGroup

    /**
     * Handles a SyncGroup: in CompletingRebalance the call is parked until the leader's assignment is stored (the
     * leader's own call writes it), in Stable it gets the member's assignment at once.
     */
    public CompletableFuture<SyncGroupResponseData> sync(SyncGroupRequestData request, short version) {
        CompletableFuture<SyncGroupResponseData> future = new CompletableFuture<>();
        try {
            if (isInvalidGroupId(request.groupId())) {
                future.complete(syncError(Errors.INVALID_GROUP_ID));
            } else if (version >= 5 && (request.protocolType() == null || request.protocolName() == null)) {
                future.complete(syncError(Errors.INCONSISTENT_GROUP_PROTOCOL));
            } else {
                doSync(request, future);
            }
        } catch (RuntimeException e) {
            LOGGER.error("SyncGroup of group {} failed", request.groupId(), e);
            future.completeExceptionally(e);
        }
        return future;
    }

    private static SyncGroupResponseData syncError(Errors error) {
        return new SyncGroupResponseData().setErrorCode(error.code());
    }

    private void doSync(SyncGroupRequestData request, CompletableFuture<SyncGroupResponseData> future) {
        ClassicGroup group = groups.get(request.groupId());
        if (group == null) {
            future.complete(syncError(Errors.UNKNOWN_MEMBER_ID));
            return;
        }
        Errors error = validateSync(group, request);
        if (error != Errors.NONE) {
            future.complete(syncError(error));
            return;
        }
        String memberId = request.memberId();
        ClassicGroupMember member = group.member(memberId);
        switch (group.state()) {
            case EMPTY -> future.complete(syncError(Errors.UNKNOWN_MEMBER_ID));
            case PREPARING_REBALANCE -> future.complete(syncError(Errors.REBALANCE_IN_PROGRESS));
            case COMPLETING_REBALANCE -> {
                CompletableFuture<SyncGroupResponseData> replaced = member.awaitingSync();
                member.setAwaitingSync(future);
                if (replaced != null) {
                    replaced.complete(syncError(Errors.REBALANCE_IN_PROGRESS));
                }
                removePendingSyncMember(group, memberId);
                if (group.isLeader(memberId)) {
                    storeAssignment(group, request);
                }
            }
            case STABLE -> {
                removePendingSyncMember(group, memberId);
                rescheduleHeartbeat(group, member, member.sessionTimeoutMs());
                future.complete(new SyncGroupResponseData().setProtocolType(group.protocolType())
                        .setProtocolName(group.protocolName()).setAssignment(member.assignment()));
            }
            default -> future.complete(syncError(Errors.COORDINATOR_NOT_AVAILABLE));
        }
    }

    private static Errors validateSync(ClassicGroup group, SyncGroupRequestData request) {
        if (group.isInState(ClassicGroupState.DEAD)) {
            return Errors.COORDINATOR_NOT_AVAILABLE;
        }
        Errors error = group.validateMember(request.memberId(), request.groupInstanceId());
        if (error != Errors.NONE) {
            return error;
        }
        if (request.generationId() != group.generationId()) {
            return Errors.ILLEGAL_GENERATION;
        }
        if (isInconsistent(request.protocolType(), group.protocolType())
                || isInconsistent(request.protocolName(), group.protocolName())) {
            return Errors.INCONSISTENT_GROUP_PROTOCOL;
        }
        return Errors.NONE;
    }

    private static boolean isInconsistent(String requested, String actual) {
        return requested != null && actual != null && !requested.equals(actual);
    }

    private void removePendingSyncMember(ClassicGroup group, String memberId) {
        group.removePendingSyncMember(memberId);
        if (group.hasReceivedSyncFromAllMembers()) {
            cancelTimer(syncKey(group.groupId()));
        }
    }

    /**
     * Writes the leader's assignment (members it left out get an empty one) as the group's record; once the write
     * is committed every parked SyncGroup gets its assignment and the group is Stable. A failed write answers them
     * with the mapped error and rebalances. Nothing happens if the group moved on meanwhile.
     */
    private void storeAssignment(ClassicGroup group, SyncGroupRequestData request) {
        String groupId = group.groupId();
        int generation = group.generationId();
        LOGGER.info("Assignment received from leader {} for group {} for generation {}; the group has {} members",
                request.memberId(), groupId, generation, group.numMembers());
        Map<String, byte[]> assignment = new HashMap<>();
        request.assignments().forEach(a -> assignment.put(a.memberId(),
                a.assignment() == null ? EMPTY_ASSIGNMENT : a.assignment()));
        List<String> missing = new ArrayList<>();
        for (ClassicGroupMember member : group.members()) {
            if (assignment.putIfAbsent(member.memberId(), EMPTY_ASSIGNMENT) == null) {
                missing.add(member.memberId());
            }
        }
        if (!missing.isEmpty()) {
            LOGGER.warn("Setting empty assignments for members {} of group {} for generation {}", missing, groupId,
                    generation);
        }
        GroupMetadataValue value = group.toRecordValue(assignment, ctx.nowMs());
        write(List.of(CoordinatorRecord.group(groupId, value))).whenComplete((ignored, error) -> {
            if (!isLive(group) || !group.isInState(ClassicGroupState.COMPLETING_REBALANCE)
                    || group.generationId() != generation) {
                return;
            }
            if (error != null) {
                Errors mapped = mapWriteError(Errors.forException(error));
                LOGGER.warn("Failed to store the assignment of group {} generation {}: {}", groupId, generation,
                        mapped);
                resetAndPropagateAssignmentWithError(group, mapped);
                maybePrepareRebalanceOrCompleteJoin(group, "Error " + mapped + " when storing group assignment"
                        + " during SyncGroup (member: " + request.memberId() + ")");
            } else {
                for (ClassicGroupMember member : group.members()) {
                    member.setAssignment(assignment.get(member.memberId()));
                }
                group.transitionTo(ClassicGroupState.STABLE, ctx.nowMs());
                counters.rebalanceCompleted();
                LOGGER.debug("Stored the assignment of group {} generation {}", groupId, generation);
                propagateAssignment(group, Errors.NONE);
            }
        });
    }

    /** The error a client sees for a failed write of group metadata (Kafka's mapping). */
    static Errors mapWriteError(Errors appendError) {
        return switch (appendError) {
            case UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS, REQUEST_TIMED_OUT -> Errors.COORDINATOR_NOT_AVAILABLE;
            case NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR -> Errors.NOT_COORDINATOR;
            case MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE, INVALID_FETCH_SIZE -> Errors.UNKNOWN_SERVER_ERROR;
            default -> appendError;
        };
    }

    // ---------------------------------------------------------------------------------------------- Heartbeat

    /** Handles a Heartbeat: restarts the member's session timer and tells it whether a rebalance is under way. */
    public CompletableFuture<HeartbeatResponseData> heartbeat(HeartbeatRequestData request, short version) {
        try {
            return CompletableFuture.completedFuture(new HeartbeatResponseData().setErrorCode(doHeartbeat(request)
                    .code()));
        } catch (RuntimeException e) {
            LOGGER.error("Heartbeat of group {} failed", request.groupId(), e);
            return CompletableFuture.failedFuture(e);
        }
    }

    private Errors doHeartbeat(HeartbeatRequestData request) {
        if (isInvalidGroupId(request.groupId())) {
            return Errors.INVALID_GROUP_ID;
        }
        ClassicGroup group = groups.get(request.groupId());
        if (group == null) {
            return Errors.UNKNOWN_MEMBER_ID;
        }
        if (group.isInState(ClassicGroupState.DEAD)) {
            return Errors.COORDINATOR_NOT_AVAILABLE;
        }
        Errors error = group.validateMember(request.memberId(), request.groupInstanceId());
        if (error != Errors.NONE) {
            return error;
        }
        if (request.generationId() != group.generationId()) {
            return Errors.ILLEGAL_GENERATION;
        }
        ClassicGroupMember member = group.member(request.memberId());
        return switch (group.state()) {
            case PREPARING_REBALANCE -> {
                rescheduleHeartbeat(group, member, member.sessionTimeoutMs());
                yield Errors.REBALANCE_IN_PROGRESS;
            }
            case COMPLETING_REBALANCE, STABLE -> {
                // Members may heartbeat as soon as they have their JoinGroup response (CompletingRebalance).
                rescheduleHeartbeat(group, member, member.sessionTimeoutMs());
                yield Errors.NONE;
            }
            default -> Errors.UNKNOWN_MEMBER_ID;
        };
    }

    // --------------------------------------------------------------------------------------------- LeaveGroup

    /**
     * Handles a LeaveGroup: removes each listed member (v3+: a batch with per-member errors; a static member may
     * be named by its instance id alone; v0-2: the one member id, its error at the top level) and rebalances.
     */
    public CompletableFuture<LeaveGroupResponseData> leave(LeaveGroupRequestData request, short version) {
        try {
            List<LeaveGroupRequestData.MemberIdentity> identities = version >= 3 ? request.members()
                    : List.of(new LeaveGroupRequestData.MemberIdentity().setMemberId(request.memberId()));
            LeaveGroupResponseData response = doLeave(request.groupId(), identities);
            if (version < 3) {
                short code = response.errorCode() != Errors.NONE.code() || response.members().isEmpty()
                        ? response.errorCode() : response.members().get(0).errorCode();
                response = new LeaveGroupResponseData().setErrorCode(code);
            }
            return CompletableFuture.completedFuture(response);
        } catch (RuntimeException e) {
            LOGGER.error("LeaveGroup of group {} failed", request.groupId(), e);
            return CompletableFuture.failedFuture(e);
        }
    }

    private LeaveGroupResponseData doLeave(String groupId, List<LeaveGroupRequestData.MemberIdentity> identities) {
        if (isInvalidGroupId(groupId)) {
            return new LeaveGroupResponseData().setErrorCode(Errors.INVALID_GROUP_ID.code());
        }
        ClassicGroup group = groups.get(groupId);
        if (group == null) {
            return new LeaveGroupResponseData().setErrorCode(Errors.UNKNOWN_MEMBER_ID.code());
        }
        if (group.isInState(ClassicGroupState.DEAD)) {
            return new LeaveGroupResponseData().setErrorCode(Errors.COORDINATOR_NOT_AVAILABLE.code());
        }
        List<LeaveGroupResponseData.MemberResponse> responses = new ArrayList<>();
        List<String> left = new ArrayList<>();
        for (LeaveGroupRequestData.MemberIdentity identity : identities) {
            String memberId = identity.memberId() == null ? NO_MEMBER_ID : identity.memberId();
            String instanceId = identity.groupInstanceId();
            String reason = identity.reason() == null ? "not provided" : identity.reason();
            Errors error;
            if (memberId.isEmpty()) {
                // Administrative removal of a static member by its instance id alone.
                String staticId = group.staticMemberId(instanceId);
                error = staticId == null ? Errors.UNKNOWN_MEMBER_ID : Errors.NONE;
                if (staticId != null) {
                    removeCurrentMember(group, staticId, reason);
                }
            } else if (group.isPendingMember(memberId)) {
                group.remove(memberId);
                cancelTimer(heartbeatKey(groupId, memberId));
                LOGGER.info("Pending member {} has left group {} (client reason: {})", memberId, groupId, reason);
                error = Errors.NONE;
            } else {
                error = group.validateMember(memberId, instanceId);
                if (error == Errors.NONE) {
                    removeCurrentMember(group, memberId, reason);
                }
            }
            if (error == Errors.NONE) {
                left.add(memberId);
            }
            responses.add(new LeaveGroupResponseData.MemberResponse().setMemberId(memberId)
                    .setGroupInstanceId(instanceId).setErrorCode(error.code()));
        }
        if (!left.isEmpty()) {
            String reason = "explicit `LeaveGroup` request for (" + String.join(", ", left) + ") members.";
            switch (group.state()) {
                case STABLE, COMPLETING_REBALANCE -> maybePrepareRebalanceOrCompleteJoin(group, reason);
                case PREPARING_REBALANCE -> maybeCompleteJoinPhase(group);
                default -> {
                }
            }
        }
        return new LeaveGroupResponseData().setMembers(responses);
    }

    private void removeCurrentMember(ClassicGroup group, String memberId, String reason) {
        ClassicGroupMember member = group.member(memberId);
        cancelTimer(heartbeatKey(group.groupId(), memberId));
        LOGGER.info("Member {} has left group {} through an explicit LeaveGroup (client reason: {})", memberId,
                group.groupId(), reason);
        group.completeJoin(member, joinError(NO_MEMBER_ID, Errors.UNKNOWN_MEMBER_ID));
        group.completeSync(member, syncError(Errors.UNKNOWN_MEMBER_ID));
        group.remove(memberId);
    }

    // ----------------------------------------------------------------------------- DescribeGroups, ListGroups

    /**
     * The group as DescribeGroups reports it: members with their metadata for the chosen protocol only when Stable
     * (always with their assignment). An unknown group is "Dead" with no members; from version 6 (KIP-1043) it also
     * carries GROUP_ID_NOT_FOUND. Authorized operations are left at their default.
     */
    public DescribeGroupsResponseData.DescribedGroup describe(String groupId, short version) {
        ClassicGroup group = groups.get(groupId);
        if (group == null || group.isInState(ClassicGroupState.DEAD)) {
            DescribeGroupsResponseData.DescribedGroup described = new DescribeGroupsResponseData.DescribedGroup()
                    .setGroupId(groupId).setGroupState(ClassicGroupState.DEAD.displayName());
            if (version >= 6) {
                described.setErrorCode(Errors.GROUP_ID_NOT_FOUND.code())
                        .setErrorMessage("Group " + groupId + " not found.");
            }
            return described;
        }
        boolean stable = group.isInState(ClassicGroupState.STABLE);
        List<DescribeGroupsResponseData.DescribedGroupMember> members = new ArrayList<>();
        for (ClassicGroupMember member : group.members()) {
            members.add(member.describe(stable ? group.protocolName() : null));
        }
        return new DescribeGroupsResponseData.DescribedGroup()
                .setGroupId(groupId)
                .setGroupState(group.state().displayName())
                .setProtocolType(group.protocolType() == null ? "" : group.protocolType())
                .setProtocolData(stable && group.protocolName() != null ? group.protocolName() : "")
                .setMembers(members);
    }

    /**
     * The groups as ListGroups reports them, filtered by state (Kafka's display names, case-insensitive) and by
     * type (case-insensitive; these groups are all "classic"); an empty or null filter matches everything.
     */
    public List<ListGroupsResponseData.ListedGroup> list(Set<String> statesFilter, Set<String> typesFilter) {
        Set<String> states = new HashSet<>();
        if (statesFilter != null) {
            statesFilter.forEach(state -> states.add(state.trim().toLowerCase(Locale.ROOT)));
        }
        boolean typeMatches = typesFilter == null || typesFilter.isEmpty()
                || typesFilter.stream().anyMatch(type -> GROUP_TYPE.equalsIgnoreCase(type.trim()));
        List<ListGroupsResponseData.ListedGroup> listed = new ArrayList<>();
        if (!typeMatches) {
            return listed;
        }
        for (ClassicGroup group : groups.values()) {
            if (group.isInState(ClassicGroupState.DEAD)
                    || (!states.isEmpty() && !states.contains(group.state().lowerCaseName()))) {
                continue;
            }
            listed.add(new ListGroupsResponseData.ListedGroup()
                    .setGroupId(group.groupId())
                    .setProtocolType(group.protocolType() == null ? "" : group.protocolType())
                    .setGroupState(group.state().displayName())
                    .setGroupType(GROUP_TYPE));
        }
        return listed;
    }

    /** The group, if this shard has it. */
    public Optional<ClassicGroup> group(String groupId) {
        return Optional.ofNullable(groups.get(groupId));
    }

    /** The ids of this shard's groups. */
    public Set<String> groupIds() {
        return Collections.unmodifiableSet(new HashSet<>(groups.keySet()));
    }

    /** Whether the group has no members: it is Empty, or unknown here (a group with only offsets). */
    public boolean isEmptyGroup(String groupId) {
        ClassicGroup group = groups.get(groupId);
        return group == null || group.isInState(ClassicGroupState.EMPTY);
    }

    /**
     * Creates an Empty group (no protocol, generation 0, nothing written) unless it exists, as Kafka does for a
     * group that only commits offsets (a "simple" group).
     */
    public ClassicGroup getOrCreateSimpleGroup(String groupId) {
        return groups.computeIfAbsent(groupId, id -> {
            LOGGER.info("Creating the simple group {} (offsets committed outside group management)", id);
            return new ClassicGroup(id, ctx.nowMs());
        });
    }

    // ------------------------------------------------------------------------------------- offset-side checks

    /**
     * Kafka's checks of an OffsetCommit against the group: an unknown group is created (Empty, in memory) for a
     * commit without generation and refused with ILLEGAL_GENERATION otherwise; a member's commit must name a
     * current member and generation; a commit without member is only accepted by an Empty group; CompletingRebalance
     * answers REBALANCE_IN_PROGRESS. A member's valid commit also counts as its heartbeat. This is the rule of
     * OffsetCommit v0-8; see {@link #validateOffsetCommit(String, int, String, String, short)}.
     */
    public Errors validateOffsetCommit(String groupId, int generationId, String memberId, String groupInstanceId) {
        return validateCommit(groupId, generationId, memberId, groupInstanceId, false, Errors.ILLEGAL_GENERATION);
    }

    /**
     * As {@link #validateOffsetCommit(String, int, String, String)} for OffsetCommit {@code version}: from version
     * 9 a commit with a generation to an unknown group gets GROUP_ID_NOT_FOUND instead of ILLEGAL_GENERATION.
     */
    public Errors validateOffsetCommit(String groupId, int generationId, String memberId, String groupInstanceId,
                                       short version) {
        return validateCommit(groupId, generationId, memberId, groupInstanceId, false,
                version >= 9 ? Errors.GROUP_ID_NOT_FOUND : Errors.ILLEGAL_GENERATION);
    }

    /**
     * Kafka's checks of a TxnOffsetCommit against the group: as an OffsetCommit's, except that a commit without
     * member is accepted by a non-empty group (old producers send none), CompletingRebalance does not refuse it and
     * it does not count as a heartbeat.
     */
    public Errors validateTxnOffsetCommit(String groupId, int generationId, String memberId,
                                          String groupInstanceId) {
        return validateCommit(groupId, generationId, memberId, groupInstanceId, true, Errors.ILLEGAL_GENERATION);
    }

    private Errors validateCommit(String groupId, int generationId, String memberId, String groupInstanceId,
                                  boolean transactional, Errors unknownGroupError) {
        String member = memberId == null ? NO_MEMBER_ID : memberId;
        ClassicGroup group = groups.get(groupId);
        if (group == null) {
            if (generationId < 0) {
                getOrCreateSimpleGroup(groupId);
                return Errors.NONE;
            }
            return unknownGroupError;
        }
        if (group.isInState(ClassicGroupState.DEAD)) {
            return Errors.COORDINATOR_NOT_AVAILABLE;
        }
        if (generationId < 0 && group.isInState(ClassicGroupState.EMPTY)) {
            return Errors.NONE;
        }
        if (generationId >= 0 || !member.isEmpty() || groupInstanceId != null) {
            Errors error = group.validateMember(member, groupInstanceId);
            if (error != Errors.NONE) {
                return error;
            }
            if (generationId != group.generationId()) {
                return Errors.ILLEGAL_GENERATION;
            }
        } else if (!transactional && !group.isInState(ClassicGroupState.EMPTY)) {
            return Errors.UNKNOWN_MEMBER_ID;
        }
        if (transactional) {
            return Errors.NONE;
        }
        if (group.isInState(ClassicGroupState.COMPLETING_REBALANCE)) {
            return Errors.REBALANCE_IN_PROGRESS;
        }
        ClassicGroupMember committer = group.member(member);
        if (committer != null && (group.isInState(ClassicGroupState.STABLE)
                || group.isInState(ClassicGroupState.PREPARING_REBALANCE))) {
            rescheduleHeartbeat(group, committer, committer.sessionTimeoutMs());
        }
        return Errors.NONE;
    }

    /** OffsetFetch against the group: GROUP_ID_NOT_FOUND for a Dead group, else NONE (unknown groups included). */
    public Errors validateOffsetFetch(String groupId) {
        ClassicGroup group = groups.get(groupId);
        return group != null && group.isInState(ClassicGroupState.DEAD) ? Errors.GROUP_ID_NOT_FOUND : Errors.NONE;
    }

    /** DeleteGroups: GROUP_ID_NOT_FOUND for an unknown or Dead group, NON_EMPTY_GROUP unless Empty. */
    public Errors validateDeleteGroup(String groupId) {
        ClassicGroup group = groups.get(groupId);
        if (group == null || group.isInState(ClassicGroupState.DEAD)) {
            return Errors.GROUP_ID_NOT_FOUND;
        }
        return group.isInState(ClassicGroupState.EMPTY) ? Errors.NONE : Errors.NON_EMPTY_GROUP;
    }

    /**
     * OffsetDelete of one topic: GROUP_ID_NOT_FOUND for an unknown or Dead group, NON_EMPTY_GROUP for a non-empty
     * group that does not use the consumer protocol, GROUP_SUBSCRIBED_TO_TOPIC when a member subscribes to it.
     */
    public Errors validateOffsetDelete(String groupId, String topic) {
        ClassicGroup group = groups.get(groupId);
        if (group == null || group.isInState(ClassicGroupState.DEAD)) {
            return Errors.GROUP_ID_NOT_FOUND;
        }
        if (group.isInState(ClassicGroupState.EMPTY)) {
            return Errors.NONE;
        }
        if (!group.usesConsumerProtocol()) {
            return Errors.NON_EMPTY_GROUP;
        }
        return group.isSubscribedToTopic(topic) ? Errors.GROUP_SUBSCRIBED_TO_TOPIC : Errors.NONE;
    }

    /**
     * Deletes the group: it becomes Dead and is forgotten (its timers cancelled, any parked call answered
     * COORDINATOR_NOT_AVAILABLE); returns the group's tombstone for the caller to write.
     */
    public List<CoordinatorRecord> deleteGroup(String groupId) {
        ClassicGroup group = groups.remove(groupId);
        if (group != null) {
            killGroup(group, Errors.COORDINATOR_NOT_AVAILABLE);
            LOGGER.info("Group {} deleted (generation {})", groupId, group.generationId());
        }
        return List.of(CoordinatorRecord.groupTombstone(groupId));
    }

    private void killGroup(ClassicGroup group, Errors error) {
        cancelTimer(joinKey(group.groupId()));
        cancelTimer(syncKey(group.groupId()));
        for (String pending : new ArrayList<>(group.pendingMembers())) {
            cancelTimer(heartbeatKey(group.groupId(), pending));
        }
        for (ClassicGroupMember member : new ArrayList<>(group.members())) {
            cancelTimer(heartbeatKey(group.groupId(), member.memberId()));
            if (member.isAwaitingJoin()) {
                group.completeJoin(member, joinError(member.memberId(), error));
            }
            group.completeSync(member, syncError(error));
        }
        group.transitionTo(ClassicGroupState.DEAD, ctx.nowMs());
    }

    // ------------------------------------------------------------------------------------------ loading

    /** Replays the group's latest metadata record while the shard loads; null (a tombstone) forgets the group. */
    public void replay(String groupId, GroupMetadataValue valueOrNull) {
        if (valueOrNull == null) {
            groups.remove(groupId);
        } else {
            groups.put(groupId, ClassicGroup.fromRecord(groupId, valueOrNull, ctx.nowMs()));
        }
    }

    /**
     * Ends the load: every loaded member gets a session timer (it must heartbeat within its session timeout), and
     * a group larger than group.max.size rebalances.
     */
    public void onLoaded() {
        for (ClassicGroup group : new ArrayList<>(groups.values())) {
            LOGGER.info("Loaded classic group {} in state {} generation {} with {} members", group.groupId(),
                    group.state(), group.generationId(), group.numMembers());
            for (ClassicGroupMember member : group.members()) {
                rescheduleHeartbeat(group, member, member.sessionTimeoutMs());
            }
            if (group.numMembers() > config.maxGroupSize()) {
                prepareRebalance(group, "Freshly-loaded group " + group.groupId() + " (size " + group.numMembers()
                        + ") is over capacity " + config.maxGroupSize()
                        + ". Rebalancing in order to give a chance for consumers to commit offsets");
            }
        }
    }

    /** The shard is lost: parked JoinGroup and SyncGroup calls get NOT_COORDINATOR, timers stop, groups go. */
    public void unload() {
        for (String key : new ArrayList<>(timerKeys)) {
            ctx.cancel(key);
        }
        timerKeys.clear();
        for (ClassicGroup group : new ArrayList<>(groups.values())) {
            killGroup(group, Errors.NOT_COORDINATOR);
        }
        groups.clear();
    }

    // ------------------------------------------------------------------------------------------- plumbing

    /** Kafka answers INVALID_GROUP_ID to group requests with an empty group id. */
    private static boolean isInvalidGroupId(String groupId) {
        return groupId == null || groupId.isEmpty();
    }

    private boolean isLive(ClassicGroup group) {
        return groups.get(group.groupId()) == group && !group.isInState(ClassicGroupState.DEAD);
    }

    private CompletableFuture<Void> write(List<CoordinatorRecord> records) {
        try {
            return ctx.write(records);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private void scheduleTimer(String key, long delayMs, Runnable task) {
        timerKeys.add(key);
        ctx.schedule(key, delayMs, () -> {
            timerKeys.remove(key);
            task.run();
        });
    }

    private void cancelTimer(String key) {
        if (timerKeys.remove(key)) {
            ctx.cancel(key);
        }
    }

    static String joinKey(String groupId) {
        return "classic-join-" + groupId;
    }

    static String syncKey(String groupId) {
        return "classic-sync-" + groupId;
    }

    static String heartbeatKey(String groupId, String memberId) {
        // The length prefix keeps (group "a-b", member "c") and (group "a", member "b-c") apart.
        return "classic-heartbeat-" + groupId.length() + "-" + groupId + "-" + memberId;
    }
}
