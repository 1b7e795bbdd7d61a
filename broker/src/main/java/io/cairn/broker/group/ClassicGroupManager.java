package io.cairn.broker.group;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.coordinator.CoordinatorWriteErrors;
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
 * <p>Design note: the manager owns the groups, their timers and the rebalance (join phase, sync phase, sessions);
 * the handling of one JoinGroup ({@link ClassicGroupJoin}), of one SyncGroup ({@link ClassicGroupSync}) and the
 * offset APIs' checks ({@link ClassicGroupOffsetChecks}) live in their own classes, which call back into the
 * manager's package-private rebalance and timer methods.
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
    static final byte[] EMPTY_ASSIGNMENT = new byte[0];
    static final String NO_MEMBER_ID = "";

    private final ShardContext<CoordinatorRecord> ctx;
    private final GroupConfig config;
    private final Map<String, ClassicGroup> groups = new HashMap<>();
    private final Set<String> timerKeys = new HashSet<>();
    private final GroupCounters counters;
    private final ClassicGroupJoin joins;
    private final ClassicGroupSync syncs;
    private final ClassicGroupOffsetChecks offsetChecks;

    /** @param counters counts the rebalances completed, shared by the coordinator's shards */
    public ClassicGroupManager(ShardContext<CoordinatorRecord> ctx, GroupConfig config, GroupCounters counters) {
        this.ctx = ctx;
        this.config = config;
        this.counters = counters;
        this.joins = new ClassicGroupJoin(this, ctx, config);
        this.syncs = new ClassicGroupSync(this, ctx, counters);
        this.offsetChecks = new ClassicGroupOffsetChecks(this);
    }

    // ------------------------------------------------------------------------------------ JoinGroup, SyncGroup

    /**
     * Handles a JoinGroup ({@link ClassicGroupJoin}): the future completes (on the coordinator thread) when the
     * member may proceed: at once for an error, MEMBER_ID_REQUIRED or a member that need not wait, else when the
     * rebalance completes.
     */
    public CompletableFuture<JoinGroupResponseData> join(ClientInfo client, JoinGroupRequestData request,
                                                         short version) {
        return joins.join(client, request, version);
    }

    /**
     * Handles a SyncGroup ({@link ClassicGroupSync}): in CompletingRebalance the call is parked until the leader's
     * assignment is stored, in Stable it gets the member's assignment at once.
     */
    public CompletableFuture<SyncGroupResponseData> sync(SyncGroupRequestData request, short version) {
        return syncs.sync(request, version);
    }

    // ------------------------------------------------------------------------------------------- rebalancing

    void maybePrepareRebalanceOrCompleteJoin(ClassicGroup group, String reason) {
        if (group.canRebalance()) {
            prepareRebalance(group, reason);
        } else {
            maybeCompleteJoinPhase(group);
        }
    }

    void prepareRebalance(ClassicGroup group, String reason) {
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

    void maybeCompleteJoinPhase(ClassicGroup group) {
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
            write(List.of(GroupRecords.group(groupId, value))).whenComplete((ignored, error) -> {
                if (error != null) {
                    // The previous generation stays in the log; its members are gone and will time out.
                    LOGGER.warn("Failed to write the empty metadata of group {}: {}", groupId,
                            CoordinatorWriteErrors.operationError(error));
                }
            });
            return;
        }
        LOGGER.info("Stabilized group {} generation {} with {} members", groupId, group.generationId(),
                group.numMembers());
        for (ClassicGroupMember member : new ArrayList<>(group.members())) {
            JoinGroupResponseData response = ClassicGroupJoin.currentGenerationResponse(group, member.memberId(),
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

    void resetAndPropagateAssignmentWithError(ClassicGroup group, Errors error) {
        for (ClassicGroupMember member : group.members()) {
            member.setAssignment(EMPTY_ASSIGNMENT);
        }
        propagateAssignment(group, error);
    }

    void propagateAssignment(ClassicGroup group, Errors error) {
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
            join.complete(ClassicGroupJoin.joinError(NO_MEMBER_ID, error));
        }
        group.completeSync(member, new SyncGroupResponseData().setErrorCode(error.code()));
    }

    // -------------------------------------------------------------------------------------------- sessions

    void rescheduleHeartbeat(ClassicGroup group, ClassicGroupMember member, int timeoutMs) {
        String memberId = member.memberId();
        scheduleTimer(heartbeatKey(group.groupId(), memberId), timeoutMs, () -> expireHeartbeat(group, memberId));
    }

    void expireHeartbeat(ClassicGroup group, String memberId) {
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
        group.completeJoin(member, ClassicGroupJoin.joinError(NO_MEMBER_ID, Errors.UNKNOWN_MEMBER_ID));
        group.completeSync(member, new SyncGroupResponseData().setErrorCode(Errors.UNKNOWN_MEMBER_ID.code()));
        group.remove(member.memberId());
        if (group.isInState(ClassicGroupState.STABLE) || group.isInState(ClassicGroupState.COMPLETING_REBALANCE)) {
            maybePrepareRebalanceOrCompleteJoin(group, reason);
        } else if (group.isInState(ClassicGroupState.PREPARING_REBALANCE) && group.hasAllMembersJoined()) {
            completeJoin(group);
        }
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
        Errors error = group.validateGeneration(request.memberId(), request.groupInstanceId(),
                request.generationId());
        if (error != Errors.NONE) {
            return error;
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
        group.completeJoin(member, ClassicGroupJoin.joinError(NO_MEMBER_ID, Errors.UNKNOWN_MEMBER_ID));
        group.completeSync(member, ClassicGroupSync.syncError(Errors.UNKNOWN_MEMBER_ID));
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

    /** The group, or null when this shard has none of that id. */
    ClassicGroup groupOrNull(String groupId) {
        return groups.get(groupId);
    }

    /** Adds a new group. */
    void putGroup(ClassicGroup group) {
        groups.put(group.groupId(), group);
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

    /** See {@link ClassicGroupOffsetChecks#validateOffsetCommit(String, int, String, String)}. */
    public Errors validateOffsetCommit(String groupId, int generationId, String memberId, String groupInstanceId) {
        return offsetChecks.validateOffsetCommit(groupId, generationId, memberId, groupInstanceId);
    }

    /** See {@link ClassicGroupOffsetChecks#validateOffsetCommit(String, int, String, String, short)}. */
    public Errors validateOffsetCommit(String groupId, int generationId, String memberId, String groupInstanceId,
                                       short version) {
        return offsetChecks.validateOffsetCommit(groupId, generationId, memberId, groupInstanceId, version);
    }

    /** See {@link ClassicGroupOffsetChecks#validateTxnOffsetCommit}. */
    public Errors validateTxnOffsetCommit(String groupId, int generationId, String memberId,
                                          String groupInstanceId) {
        return offsetChecks.validateTxnOffsetCommit(groupId, generationId, memberId, groupInstanceId);
    }

    /** See {@link ClassicGroupOffsetChecks#validateOffsetFetch}. */
    public Errors validateOffsetFetch(String groupId) {
        return offsetChecks.validateOffsetFetch(groupId);
    }

    /** See {@link ClassicGroupOffsetChecks#validateDeleteGroup}. */
    public Errors validateDeleteGroup(String groupId) {
        return offsetChecks.validateDeleteGroup(groupId);
    }

    /** See {@link ClassicGroupOffsetChecks#validateOffsetDelete}. */
    public Errors validateOffsetDelete(String groupId, String topic) {
        return offsetChecks.validateOffsetDelete(groupId, topic);
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
        return List.of(GroupRecords.groupTombstone(groupId));
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
                group.completeJoin(member, ClassicGroupJoin.joinError(member.memberId(), error));
            }
            group.completeSync(member, ClassicGroupSync.syncError(error));
        }
        group.transitionTo(ClassicGroupState.DEAD, ctx.nowMs());
    }

    // ------------------------------------------------------------------- conversions to and from consumer groups

    /**
     * Forgets a group being upgraded to a consumer group ({@link GroupMigration}): its parked JoinGroup and SyncGroup
     * calls are answered REBALANCE_IN_PROGRESS (the members rejoin the consumer group) and its timers stop.
     */
    void detachForUpgrade(ClassicGroup group) {
        groups.remove(group.groupId());
        killGroup(group, Errors.REBALANCE_IN_PROGRESS);
        LOGGER.info("Group {} (generation {}) is upgraded to a consumer group", group.groupId(),
                group.generationId());
    }

    /**
     * Installs the group {@code value} describes (a downgraded consumer group, or an upgraded group back after its
     * write failed): each member gets its session timer.
     *
     * @param protocols each member's JoinGroup protocols, or null to keep the recorded protocol alone
     */
    void attach(String groupId, GroupMetadataValue value, Map<String, Map<String, byte[]>> protocols) {
        ClassicGroup group = ClassicGroup.fromRecord(groupId, value, ctx.nowMs());
        groups.put(groupId, group);
        for (ClassicGroupMember member : new ArrayList<>(group.members())) {
            if (protocols != null && protocols.containsKey(member.memberId())) {
                group.updateMember(member, protocols.get(member.memberId()), member.rebalanceTimeoutMs(),
                        member.sessionTimeoutMs(), null);
            }
            rescheduleHeartbeat(group, member, member.sessionTimeoutMs());
        }
    }

    /** A downgraded group rebalances at once, as Kafka's {@code convertToClassicGroup}. */
    void rebalanceAfterDowngrade(String groupId) {
        ClassicGroup group = groups.get(groupId);
        if (group != null) {
            prepareRebalance(group, "Downgrade group " + groupId + " from consumer to classic.");
        }
    }

    /** Undoes a downgrade whose write failed: the classic group goes (the consumer group comes back). */
    void detachAfterFailedDowngrade(String groupId) {
        ClassicGroup group = groups.remove(groupId);
        if (group != null) {
            killGroup(group, Errors.REBALANCE_IN_PROGRESS);
        }
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
    static boolean isInvalidGroupId(String groupId) {
        return groupId == null || groupId.isEmpty();
    }

    boolean isLive(ClassicGroup group) {
        return groups.get(group.groupId()) == group && !group.isInState(ClassicGroupState.DEAD);
    }

    CompletableFuture<Void> write(List<CoordinatorRecord> records) {
        try {
            return ctx.write(records);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    void scheduleTimer(String key, long delayMs, Runnable task) {
        timerKeys.add(key);
        ctx.schedule(key, delayMs, () -> {
            timerKeys.remove(key);
            task.run();
        });
    }

    void cancelTimer(String key) {
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
