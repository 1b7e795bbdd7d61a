package io.cairn.broker.group;

import io.cairn.broker.coordinator.CoordinatorWriteErrors;
import io.cairn.broker.coordinator.ShardContext;
import io.cairn.broker.group.record.GroupMetadataValue;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.JoinGroupRequestData;
import io.cairn.wire.message.JoinGroupResponseData;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * The JoinGroup side of the classic protocol for one coordinator shard: admits new, pending, existing and static
 * members into a {@link ClassicGroup} and parks their calls until the rebalance the {@link ClassicGroupManager} runs
 * completes. The manager owns the groups, their timers and the rebalance itself; this class is the part of it that
 * handles one JoinGroup (Kafka's {@code classicGroupJoin}), split off to keep the manager readable.
 *
 * <p>Thread-safety: as the manager's, confined to the shard's thread.
 */
final class ClassicGroupJoin {

    private static final Logger LOGGER = LogManager.getLogger(ClassicGroupJoin.class);

    private final ClassicGroupManager manager;
    private final ShardContext<?> ctx;
    private final GroupConfig config;

    ClassicGroupJoin(ClassicGroupManager manager, ShardContext<?> ctx, GroupConfig config) {
        this.manager = manager;
        this.ctx = ctx;
        this.config = config;
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
            response.setMemberId(ClassicGroupManager.NO_MEMBER_ID);
        }
        if (version < 9) {
            response.setSkipAssignment(false);
        }
        return response;
    }

    private void doJoin(ClientInfo client, JoinGroupRequestData request, short version,
                        CompletableFuture<JoinGroupResponseData> future) {
        String groupId = request.groupId();
        String memberId = request.memberId() == null ? ClassicGroupManager.NO_MEMBER_ID : request.memberId();
        if (ClassicGroupManager.isInvalidGroupId(groupId)) {
            future.complete(joinError(memberId, Errors.INVALID_GROUP_ID));
            return;
        }
        if (request.sessionTimeoutMs() < config.minSessionTimeoutMs()
                || request.sessionTimeoutMs() > config.maxSessionTimeoutMs()) {
            future.complete(joinError(memberId, Errors.INVALID_SESSION_TIMEOUT));
            return;
        }
        boolean unknownMember = memberId.isEmpty();
        ClassicGroup group = manager.groupOrNull(groupId);
        if (group == null) {
            if (!unknownMember) {
                future.complete(joinError(memberId, Errors.UNKNOWN_MEMBER_ID));
                return;
            }
            group = new ClassicGroup(groupId, ctx.nowMs());
            manager.putGroup(group);
            writeEmptyGroup(group);
        }
        if (!acceptJoiningMember(group, memberId)) {
            group.remove(memberId);
            manager.cancelTimer(ClassicGroupManager.heartbeatKey(groupId, memberId));
            future.complete(joinError(ClassicGroupManager.NO_MEMBER_ID, Errors.GROUP_MAX_SIZE_REACHED));
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
        manager.write(List.of(GroupRecords.group(group.groupId(), value))).whenComplete((ignored, error) -> {
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
            future.complete(joinError(ClassicGroupManager.NO_MEMBER_ID, Errors.COORDINATOR_NOT_AVAILABLE));
            return;
        }
        if (!group.supportsProtocols(request.protocolType(), protocols.keySet())) {
            future.complete(joinError(ClassicGroupManager.NO_MEMBER_ID, Errors.INCONSISTENT_GROUP_PROTOCOL));
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
            manager.scheduleTimer(ClassicGroupManager.heartbeatKey(groupId, newMemberId), request.sessionTimeoutMs(),
                    () -> manager.expireHeartbeat(group, newMemberId));
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

    static JoinGroupResponseData currentGenerationResponse(ClassicGroup group, String memberId,
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

    static JoinGroupResponseData joinError(String memberId, Errors error) {
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
        manager.rescheduleHeartbeat(group, member, ClassicGroupManager.NEW_MEMBER_JOIN_TIMEOUT_MS);
        manager.maybePrepareRebalanceOrCompleteJoin(group, "Adding new member " + memberId + " with group instance id "
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
        manager.maybePrepareRebalanceOrCompleteJoin(group, reason);
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
        manager.cancelTimer(ClassicGroupManager.heartbeatKey(group.groupId(), oldMemberId));
        ClassicGroupMember member = group.replaceStaticMember(instanceId, oldMemberId, newMemberId);
        manager.rescheduleHeartbeat(group, member, member.sessionTimeoutMs());
        int oldRebalanceTimeoutMs = member.rebalanceTimeoutMs();
        int oldSessionTimeoutMs = member.sessionTimeoutMs();
        Map<String, byte[]> oldProtocols = member.protocols();
        group.updateMember(member, protocols, request.rebalanceTimeoutMs(), request.sessionTimeoutMs(), future);
        String reason = joinReason(request);
        switch (group.state()) {
            case STABLE -> {
                if (!Objects.equals(group.selectProtocol(), group.protocolName())) {
                    manager.maybePrepareRebalanceOrCompleteJoin(group, "Group's selected protocol will change because"
                            + " static member " + newMemberId + " with instance id " + instanceId
                            + " joined with a change of protocol; client reason: " + reason);
                    return;
                }
                LOGGER.info("Static member {} of group {} rejoins during Stable without changing the selected"
                        + " protocol: no rebalance", instanceId, group.groupId());
                int generation = group.generationId();
                GroupMetadataValue value = group.toRecordValue(null, ctx.nowMs());
                manager.write(List.of(GroupRecords.group(group.groupId(), value))).whenComplete((ignored, error) -> {
                    if (!manager.isLive(group) || !group.isInState(ClassicGroupState.STABLE)
                            || group.generationId() != generation || group.member(newMemberId) != member
                            || !member.isAwaitingJoin()) {
                        return;
                    }
                    if (error != null) {
                        Errors mapped = CoordinatorWriteErrors.operationError(error);
                        LOGGER.warn("Failed to store static member {} of group {} with member id {}: {}; reverting"
                                + " to member id {}", instanceId, group.groupId(), newMemberId, mapped, oldMemberId);
                        CompletableFuture<JoinGroupResponseData> parked = member.awaitingJoin();
                        group.updateMember(member, oldProtocols, oldRebalanceTimeoutMs, oldSessionTimeoutMs, null);
                        manager.cancelTimer(ClassicGroupManager.heartbeatKey(group.groupId(), newMemberId));
                        ClassicGroupMember restored = group.replaceStaticMember(instanceId, newMemberId, oldMemberId);
                        manager.rescheduleHeartbeat(group, restored, restored.sessionTimeoutMs());
                        parked.complete(new JoinGroupResponseData().setMemberId(ClassicGroupManager.NO_MEMBER_ID)
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
            case COMPLETING_REBALANCE -> manager.prepareRebalance(group, "Updating metadata for static member "
                    + newMemberId + " with instance id " + instanceId + "; client reason: " + reason);
            case PREPARING_REBALANCE -> manager.maybeCompleteJoinPhase(group);
            default -> throw new IllegalStateException("Group " + group.groupId() + " in state " + group.state()
                    + " cannot have the static member " + instanceId);
        }
    }
}
