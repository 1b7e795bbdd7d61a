package io.cairn.broker.group;

import io.cairn.broker.coordinator.CoordinatorWriteErrors;
import io.cairn.broker.coordinator.ShardContext;
import io.cairn.broker.group.record.GroupMetadataValue;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.SyncGroupRequestData;
import io.cairn.wire.message.SyncGroupResponseData;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The SyncGroup side of the classic protocol for one coordinator shard: parks members' SyncGroup calls during
 * CompletingRebalance, stores the leader's assignment as the group's record and hands every member its share once
 * the write is committed (Kafka's {@code classicGroupSync}). The {@link ClassicGroupManager} owns the groups, their
 * timers and the rebalance; this class is its SyncGroup part, split off to keep the manager readable.
 *
 * <p>Thread-safety: as the manager's, confined to the shard's thread.
 */
final class ClassicGroupSync {

    private static final Logger LOGGER = LogManager.getLogger(ClassicGroupSync.class);

    private final ClassicGroupManager manager;
    private final ShardContext<?> ctx;
    private final GroupCounters counters;

    ClassicGroupSync(ClassicGroupManager manager, ShardContext<?> ctx, GroupCounters counters) {
        this.manager = manager;
        this.ctx = ctx;
        this.counters = counters;
    }

    // ---------------------------------------------------------------------------------------------- SyncGroup

    /**
     * Handles a SyncGroup: in CompletingRebalance the call is parked until the leader's assignment is stored (the
     * leader's own call writes it), in Stable it gets the member's assignment at once.
     */
    public CompletableFuture<SyncGroupResponseData> sync(SyncGroupRequestData request, short version) {
        CompletableFuture<SyncGroupResponseData> future = new CompletableFuture<>();
        try {
            if (ClassicGroupManager.isInvalidGroupId(request.groupId())) {
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

    static SyncGroupResponseData syncError(Errors error) {
        return new SyncGroupResponseData().setErrorCode(error.code());
    }

    private void doSync(SyncGroupRequestData request, CompletableFuture<SyncGroupResponseData> future) {
        ClassicGroup group = manager.groupOrNull(request.groupId());
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
                manager.rescheduleHeartbeat(group, member, member.sessionTimeoutMs());
                future.complete(new SyncGroupResponseData().setProtocolType(group.protocolType())
                        .setProtocolName(group.protocolName()).setAssignment(member.assignment()));
            }
            default -> future.complete(syncError(Errors.COORDINATOR_NOT_AVAILABLE));
        }
    }

    private static Errors validateSync(ClassicGroup group, SyncGroupRequestData request) {
        Errors error = group.validateGeneration(request.memberId(), request.groupInstanceId(),
                request.generationId());
        if (error != Errors.NONE) {
            return error;
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
            manager.cancelTimer(ClassicGroupManager.syncKey(group.groupId()));
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
                a.assignment() == null ? ClassicGroupManager.EMPTY_ASSIGNMENT : a.assignment()));
        List<String> missing = new ArrayList<>();
        for (ClassicGroupMember member : group.members()) {
            if (assignment.putIfAbsent(member.memberId(), ClassicGroupManager.EMPTY_ASSIGNMENT) == null) {
                missing.add(member.memberId());
            }
        }
        if (!missing.isEmpty()) {
            LOGGER.warn("Setting empty assignments for members {} of group {} for generation {}", missing, groupId,
                    generation);
        }
        GroupMetadataValue value = group.toRecordValue(assignment, ctx.nowMs());
        manager.write(List.of(GroupRecords.group(groupId, value))).whenComplete((ignored, error) -> {
            if (!manager.isLive(group) || !group.isInState(ClassicGroupState.COMPLETING_REBALANCE)
                    || group.generationId() != generation) {
                return;
            }
            if (error != null) {
                Errors mapped = CoordinatorWriteErrors.operationError(error);
                LOGGER.warn("Failed to store the assignment of group {} generation {}: {}", groupId, generation,
                        mapped);
                manager.resetAndPropagateAssignmentWithError(group, mapped);
                manager.maybePrepareRebalanceOrCompleteJoin(group, "Error " + mapped + " when storing group assignment"
                        + " during SyncGroup (member: " + request.memberId() + ")");
            } else {
                for (ClassicGroupMember member : group.members()) {
                    member.setAssignment(assignment.get(member.memberId()));
                }
                group.transitionTo(ClassicGroupState.STABLE, ctx.nowMs());
                counters.rebalanceCompleted();
                LOGGER.debug("Stored the assignment of group {} generation {}", groupId, generation);
                manager.propagateAssignment(group, Errors.NONE);
            }
        });
    }
}
