package io.cairn.broker.group.share;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.coordinator.CoordinatorWriteErrors;
import io.cairn.broker.coordinator.ShardContext;
import io.cairn.broker.group.GroupConfigs;
import io.cairn.broker.group.consumer.ConsumerGroupTopics;
import io.cairn.wire.error.ApiException;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AlterShareGroupOffsetsRequestData;
import io.cairn.wire.message.AlterShareGroupOffsetsResponseData;
import io.cairn.wire.message.DeleteShareGroupOffsetsRequestData;
import io.cairn.wire.message.DeleteShareGroupOffsetsResponseData;
import io.cairn.wire.message.DeleteShareGroupStateRequestData;
import io.cairn.wire.message.InitializeShareGroupStateRequestData;
import io.cairn.wire.message.ListGroupsResponseData;
import io.cairn.wire.message.ShareGroupDescribeResponseData;
import io.cairn.wire.message.ShareGroupHeartbeatRequestData;
import io.cairn.wire.message.ShareGroupHeartbeatResponseData;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The share groups of one coordinator shard and their ShareGroupHeartbeat, by Kafka 4.1's rules
 * ({@code GroupMetadataManager.shareGroupHeartbeat}). One heartbeat:
 *
 * <ol>
 *   <li>is checked (INVALID_REQUEST, see {@link #invalid}; then GROUP_ID_NOT_FOUND, GROUP_MAX_SIZE_REACHED,
 *       UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH);</li>
 *   <li>creates or updates the member; a changed subscription, a change of the subscribed topics' partitions, or
 *       initialized share-partitions that the target assignment does not cover yet bump the group epoch;</li>
 *   <li>when the group epoch is ahead of the assignment epoch, computes a new target assignment with the
 *       {@link SimpleAssignor} over the initialized share-partitions;</li>
 *   <li>reconciles the member to its target at once (a share partition has nothing to revoke) and answers its
 *       epoch, the heartbeat interval and, when it joined, sent its subscription or its assignment changed, its
 *       assignment;</li>
 *   <li>moves the subscribed share-partitions without state to "initializing" and returns the
 *       InitializeShareGroupState request (state epoch = the group epoch, start offset -1: the share-partition leader
 *       applies {@code share.auto.offset.reset}) for the caller to send once the records are written; its answer comes
 *       back as {@link #initialized} or {@link #initializeFailed}.</li>
 * </ol>
 *
 * A member that does not heartbeat within {@code group.share.session.timeout.ms} is removed (the group epoch bumped);
 * epoch -1 leaves. Every change is written to {@code __consumer_offsets} as Kafka's records ({@link ShareGroupRecords})
 * and the answer goes out once they are committed; when the write fails the group goes back to its copy from before
 * the change. A loading shard replays the records ({@link #replay}).
 *
 * <p>Thread-safety: not thread-safe; every method and timer runs on the shard's thread ({@link ShardContext}).
 */
public final class ShareGroupManager {

    /** The protocol type and group type of a share group in ListGroups. */
    public static final String GROUP_TYPE = "share";

    private static final Logger LOGGER = LogManager.getLogger(ShareGroupManager.class);

    private final ShardContext<CoordinatorRecord> ctx;
    private final ShareGroupConfig config;
    private final Supplier<ConsumerGroupTopics> topics;
    private final Predicate<String> otherGroupTypeExists;
    private final SimpleAssignor assignor = new SimpleAssignor();
    private final Map<String, ShareGroup> groups = new HashMap<>();
    private final Map<String, SharePartitionStates> states = new HashMap<>();
    private final Map<String, Map<Uuid, Integer>> shapes = new HashMap<>();

    /** A heartbeat's answer, and the InitializeShareGroupState to send once it is written (if any). */
    public record HeartbeatResult(ShareGroupHeartbeatResponseData response,
                                  Optional<InitializeShareGroupStateRequestData> initialize) {
    }

    /** A group as it was before a change (null: it did not exist). */
    private record Snapshot(String groupId, ShareGroup group, SharePartitionStates states, Map<Uuid, Integer> shape) {
    }

    /**
     * @param topics               the current topics (the broker's metadata image)
     * @param otherGroupTypeExists whether a classic or consumer group has an id: it is not a share group's
     */
    public ShareGroupManager(ShardContext<CoordinatorRecord> ctx, ShareGroupConfig config,
                             Supplier<ConsumerGroupTopics> topics, Predicate<String> otherGroupTypeExists) {
        this.ctx = ctx;
        this.config = config;
        this.topics = topics;
        this.otherGroupTypeExists = otherGroupTypeExists;
    }

    /**
     * Kafka's request checks, made before the request reaches the group's shard: the INVALID_REQUEST answer, or empty
     * for a valid request.
     */
    public static Optional<ShareGroupHeartbeatResponseData> invalid(ShareGroupHeartbeatRequestData request) {
        try {
            ShareGroupHeartbeats.validate(request);
            return Optional.empty();
        } catch (ApiException e) {
            return Optional.of(ShareGroupHeartbeats.errorResponse(request.groupId(), Errors.forException(e), e));
        }
    }

    public Optional<ShareGroup> group(String groupId) {
        return Optional.ofNullable(groups.get(groupId));
    }

    public Set<String> groupIds() {
        return Collections.unmodifiableSet(new HashSet<>(groups.keySet()));
    }

    /** The share-partitions of the group with state at the share coordinator. */
    public SharePartitionStates states(String groupId) {
        return states.getOrDefault(groupId, SharePartitionStates.EMPTY);
    }

    /**
     * Handles one ShareGroupHeartbeat; errors are in the response.
     *
     * @param clientId   the request header's client id
     * @param clientHost the client's address ({@code /127.0.0.1})
     */
    public CompletableFuture<HeartbeatResult> heartbeat(String clientId, String clientHost,
                                                        ShareGroupHeartbeatRequestData request) {
        List<CoordinatorRecord> records = new ArrayList<>();
        Snapshot before = null;
        HeartbeatResult result;
        try {
            ShareGroupHeartbeats.validate(request);
            before = snapshot(request.groupId());
            result = request.memberEpoch() == ShareGroupHeartbeats.LEAVE_GROUP_MEMBER_EPOCH
                ? new HeartbeatResult(leave(request, records), Optional.empty())
                : join(clientId, clientHost, request, records);
        } catch (ApiException e) {
            if (before != null) {
                // The checks all come before any change but the creation of a new group: no timer to restore.
                restore(before, false);
            }
            return CompletableFuture.completedFuture(new HeartbeatResult(
                ShareGroupHeartbeats.errorResponse(request.groupId(), Errors.forException(e), e), Optional.empty()));
        }
        if (records.isEmpty()) {
            return CompletableFuture.completedFuture(result);
        }
        Snapshot undo = before;
        return write(records).handle((ignored, failure) -> {
            if (failure == null) {
                return result;
            }
            LOGGER.warn("[GroupId {}] Reverting a change whose write failed: {}", undo.groupId(),
                CoordinatorWriteErrors.operationError(failure));
            restore(undo, true);
            return new HeartbeatResult(ShareGroupHeartbeats.errorResponse(request.groupId(),
                CoordinatorWriteErrors.operationError(failure), failure), Optional.empty());
        });
    }

    private HeartbeatResult join(String clientId, String clientHost, ShareGroupHeartbeatRequestData request,
                                 List<CoordinatorRecord> records) {
        String groupId = request.groupId();
        String memberId = request.memberId();
        int epoch = request.memberEpoch();
        boolean joining = epoch == 0;
        ShareGroup group = groupOrCreate(groupId, joining);
        if (group.numMembers() >= config.maxSize() && (memberId.isEmpty() || !group.hasMember(memberId))) {
            throw Errors.GROUP_MAX_SIZE_REACHED.exception("The share group has reached its maximum capacity of "
                + config.maxSize() + " members.");
        }
        ShareGroupMember member = group.member(memberId);
        if (member == null) {
            if (!joining) {
                throw Errors.UNKNOWN_MEMBER_ID.exception("Member " + memberId + " is not a member of group "
                    + groupId + ".");
            }
            member = ShareGroupMember.joining(memberId);
            LOGGER.info("[GroupId {}] Member {} joins the share group using the share protocol.", groupId, memberId);
        }
        ShareGroupHeartbeats.checkEpoch(member, epoch);
        ShareGroupMember updated = member.withSubscription(request.rackId() == null ? member.rackId()
                : request.rackId(), clientId, clientHost, request.subscribedTopicNames() == null
                ? member.subscribedTopicNames() : request.subscribedTopicNames());
        boolean bump = false;
        if (!group.hasMember(memberId) || !updated.sameSubscription(member)) {
            records.add(ShareGroupRecords.memberSubscription(groupId, updated));
            if (!updated.subscribedTopicNames().equals(member.subscribedTopicNames())) {
                LOGGER.info("[GroupId {}] Member {} updated its subscribed topics to: {}.", groupId, memberId,
                    updated.subscribedTopicNames());
                bump = true;
            }
        }
        group.updateMember(updated);
        bump |= initializedAssignmentPending(group);
        bump |= refreshShape(group);
        if (bump) {
            group.setGroupEpoch(group.groupEpoch() + 1);
            records.add(ShareGroupRecords.groupEpoch(groupId, group.groupEpoch()));
            LOGGER.info("[GroupId {}] Bumped group epoch to {}.", groupId, group.groupEpoch());
        }
        if (group.groupEpoch() > group.assignmentEpoch()) {
            updateTargetAssignment(group, records);
        }
        ShareGroupMember reconciled = updated;
        if (updated.memberEpoch() != group.assignmentEpoch()) {
            reconciled = updated.reconciledTo(group.assignmentEpoch(), group.targetAssignment(memberId));
            group.updateMember(reconciled);
            records.add(ShareGroupRecords.currentAssignment(groupId, reconciled));
        }
        scheduleSessionTimeout(groupId, memberId);
        ShareGroupHeartbeatResponseData response = new ShareGroupHeartbeatResponseData().setMemberId(memberId)
            .setMemberEpoch(reconciled.memberEpoch())
            .setHeartbeatIntervalMs(groupValue(groupId, GroupConfigs.HEARTBEAT_INTERVAL_MS,
                config.heartbeatIntervalMs()));
        if (joining || request.subscribedTopicNames() != null
                || !reconciled.assignedPartitions().equals(member.assignedPartitions())) {
            response.setAssignment(ShareGroupHeartbeats.assignment(reconciled.assignedPartitions()));
        }
        return new HeartbeatResult(response, initializeRequest(group, records));
    }

    private ShareGroup groupOrCreate(String groupId, boolean create) {
        ShareGroup group = groups.get(groupId);
        if (group != null) {
            return group;
        }
        if (otherGroupTypeExists.test(groupId)) {
            throw Errors.GROUP_ID_NOT_FOUND.exception("Group " + groupId + " is not a share group.");
        }
        if (!create) {
            throw Errors.GROUP_ID_NOT_FOUND.exception("Share group " + groupId + " not found.");
        }
        group = new ShareGroup(groupId);
        groups.put(groupId, group);
        return group;
    }

    /**
     * Kafka's {@code initializedAssignmentPending}: the group has members and some initialized share-partition of a
     * subscribed topic is not in its target assignment (it was initialized since the assignment was computed). Kafka
     * 4.1 compares all initialized share-partitions with the assignment, which keeps bumping the epoch of a group
     * whose members unsubscribed from an initialized topic; Cairn looks at the subscribed topics only.
     */
    private boolean initializedAssignmentPending(ShareGroup group) {
        SharePartitionStates current = states.get(group.groupId());
        if (current == null || group.numMembers() == 0) {
            return false;
        }
        ConsumerGroupTopics image = topics.get();
        Map<Uuid, Set<Integer>> assigned = group.assignedPartitions();
        for (String name : group.subscribedTopicNames()) {
            Uuid id = image.topicId(name);
            SharePartitionStates.Topic initialized = id == null ? null : current.initialized().get(id);
            if (initialized != null && !assigned.getOrDefault(id, Set.of()).containsAll(initialized.partitions())) {
                return true;
            }
        }
        return false;
    }

    /** Records the subscribed topics' partition counts; true when they changed since the last look. */
    private boolean refreshShape(ShareGroup group) {
        ConsumerGroupTopics current = topics.get();
        Map<Uuid, Integer> shape = new HashMap<>();
        for (String name : group.subscribedTopicNames()) {
            Uuid id = current.topicId(name);
            if (id != null) {
                shape.put(id, current.numPartitions(id));
            }
        }
        Map<Uuid, Integer> previous = shapes.put(group.groupId(), shape);
        return previous != null && !previous.equals(shape);
    }

    private void updateTargetAssignment(ShareGroup group, List<CoordinatorRecord> records) {
        ShareGroupHeartbeats.updateTargetAssignment(group, assignor, topics.get(), states(group.groupId()), records);
        LOGGER.info("[GroupId {}] Computed a new target assignment for epoch {} with '{}' assignor.",
            group.groupId(), group.groupEpoch(), SimpleAssignor.NAME);
    }

    /**
     * Kafka's {@code maybeCreateInitializeShareGroupStateRequest}: the subscribed share-partitions neither initialized
     * nor initializing (or initializing for longer than the retry time) become initializing, recorded, and the
     * request that initializes them is returned.
     */
    private Optional<InitializeShareGroupStateRequestData> initializeRequest(ShareGroup group,
                                                                             List<CoordinatorRecord> records) {
        Map<Uuid, SharePartitionStates.Topic> change = ShareGroupHeartbeats.uninitialized(
            group.subscribedTopicNames(), states(group.groupId()), topics.get(), ctx.nowMs(),
            config.initializeRetryMs());
        if (change.isEmpty()) {
            return Optional.empty();
        }
        SharePartitionStates current = states(group.groupId());
        Map<Uuid, String> deleting = new HashMap<>(current.deleting());
        deleting.keySet().removeAll(change.keySet());
        SharePartitionStates next = new SharePartitionStates(current.initializing(), current.initialized(), deleting)
            .withInitializing(change);
        states.put(group.groupId(), next);
        records.add(ShareGroupRecords.statePartitions(group.groupId(), next));
        return Optional.of(ShareGroupHeartbeats.initializeRequest(group.groupId(), group.groupEpoch(), change));
    }

    /**
     * The share coordinator initialized these share-partitions (Kafka's {@code initializeShareGroupState}): they
     * become initialized, so the next heartbeat assigns them.
     */
    public CompletableFuture<Void> initialized(String groupId, Map<Uuid, Set<Integer>> partitions) {
        return updateStates(groupId, partitions, true);
    }

    /** Their initialization failed (Kafka's {@code uninitializeShareGroupState}): a later heartbeat retries. */
    public CompletableFuture<Void> initializeFailed(String groupId, Map<Uuid, Set<Integer>> partitions) {
        return updateStates(groupId, partitions, false);
    }

    private CompletableFuture<Void> updateStates(String groupId, Map<Uuid, Set<Integer>> partitions, boolean done) {
        if (!groups.containsKey(groupId) || partitions.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        ConsumerGroupTopics current = topics.get();
        Map<Uuid, SharePartitionStates.Topic> attached = new HashMap<>();
        partitions.forEach((topic, ids) -> {
            String name = current.topicName(topic);
            if (name != null) {
                attached.put(topic, new SharePartitionStates.Topic(name, ids, ctx.nowMs()));
            }
        });
        Snapshot before = snapshot(groupId);
        SharePartitionStates now = states(groupId);
        SharePartitionStates next = done ? now.withInitialized(attached) : now.withoutInitializing(attached);
        states.put(groupId, next);
        return write(List.of(ShareGroupRecords.statePartitions(groupId, next))).whenComplete((ignored, failure) -> {
            if (failure != null) {
                restore(before, false);
            }
        });
    }

    // ------------------------------------------------------------------------------------------------- leaving

    private ShareGroupHeartbeatResponseData leave(ShareGroupHeartbeatRequestData request,
                                                  List<CoordinatorRecord> records) {
        ShareGroup group = groups.get(request.groupId());
        if (group == null) {
            throw Errors.GROUP_ID_NOT_FOUND.exception(otherGroupTypeExists.test(request.groupId())
                ? "Group " + request.groupId() + " is not a share group."
                : "Group " + request.groupId() + " not found.");
        }
        ShareGroupMember member = group.member(request.memberId());
        if (member == null) {
            throw Errors.UNKNOWN_MEMBER_ID.exception("Member " + request.memberId() + " is not a member of group "
                + group.groupId() + ".");
        }
        LOGGER.info("[GroupId {}] Member {} left the share group.", group.groupId(), member.memberId());
        records.addAll(fence(group, member));
        return new ShareGroupHeartbeatResponseData().setMemberId(request.memberId())
            .setMemberEpoch(request.memberEpoch());
    }

    /** Removes the member (Kafka's {@code shareGroupFenceMember}): its tombstones and a group epoch bump. */
    private List<CoordinatorRecord> fence(ShareGroup group, ShareGroupMember member) {
        List<CoordinatorRecord> records = new ArrayList<>(ShareGroupRecords.memberTombstones(group.groupId(),
            member.memberId()));
        group.removeMember(member.memberId());
        refreshShape(group);
        group.setGroupEpoch(group.groupEpoch() + 1);
        records.add(ShareGroupRecords.groupEpoch(group.groupId(), group.groupEpoch()));
        ctx.cancel(sessionKey(group.groupId(), member.memberId()));
        return records;
    }

    /** The group's {@code share.*} config {@code key} ({@link GroupConfigs}), else the broker's value. */
    private int groupValue(String groupId, String key, int brokerValue) {
        return GroupConfigs.intValue(topics.get().groupConfigs(groupId), key, brokerValue);
    }

    private void scheduleSessionTimeout(String groupId, String memberId) {
        ctx.schedule(sessionKey(groupId, memberId),
            groupValue(groupId, GroupConfigs.SESSION_TIMEOUT_MS, config.sessionTimeoutMs()), () -> {
            ShareGroup group = groups.get(groupId);
            ShareGroupMember member = group == null ? null : group.member(memberId);
            if (member == null) {
                return;
            }
            LOGGER.info("[GroupId {}] Member {} fenced from the group because its session expired.", groupId,
                memberId);
            Snapshot before = snapshot(groupId);
            write(fence(group, member)).whenComplete((ignored, failure) -> {
                if (failure != null) {
                    LOGGER.warn("[GroupId {}] Cannot write the removal of member {}: {}", groupId, memberId,
                        CoordinatorWriteErrors.operationError(failure));
                    restore(before, true);
                }
            });
        });
    }

    static String sessionKey(String groupId, String memberId) {
        return "share-session-" + groupId.length() + "-" + groupId + "-" + memberId;
    }

    // ----------------------------------------------------------------------------- snapshots and writes

    private Snapshot snapshot(String groupId) {
        ShareGroup group = groups.get(groupId);
        Map<Uuid, Integer> shape = shapes.get(groupId);
        return new Snapshot(groupId, group == null ? null : group.copy(), states.get(groupId),
            shape == null ? null : Map.copyOf(shape));
    }

    /** Puts the group back as it was in {@code before}; with {@code timers}, its members' sessions restart. */
    private void restore(Snapshot before, boolean timers) {
        String groupId = before.groupId();
        ShareGroup current = groups.get(groupId);
        if (current != null) {
            current.members().stream().filter(m -> before.group() == null || !before.group().hasMember(m.memberId()))
                .forEach(m -> ctx.cancel(sessionKey(groupId, m.memberId())));
        }
        putOrRemove(groups, groupId, before.group() == null ? null : before.group().copy());
        putOrRemove(states, groupId, before.states());
        putOrRemove(shapes, groupId, before.shape() == null ? null : new HashMap<>(before.shape()));
        if (timers && before.group() != null) {
            before.group().members().forEach(m -> scheduleSessionTimeout(groupId, m.memberId()));
        }
    }

    private static <V> void putOrRemove(Map<String, V> map, String key, V value) {
        if (value == null) {
            map.remove(key);
        } else {
            map.put(key, value);
        }
    }

    private CompletableFuture<Void> write(List<CoordinatorRecord> records) {
        try {
            return ctx.write(records);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    // ------------------------------------------------------------------------ share group offsets (admin)

    /** AlterShareGroupOffsets on the shard: the answer, and the InitializeShareGroupState to send once written. */
    public record AlterResult(AlterShareGroupOffsetsResponseData response,
                              Optional<InitializeShareGroupStateRequestData> initialize) {
    }

    /**
     * The start of DeleteShareGroupOffsets on the shard: a group-level error (NONE, GROUP_ID_NOT_FOUND,
     * NON_EMPTY_GROUP, a write error) with its message, the topics that cannot be deleted, and the
     * DeleteShareGroupState to send once written.
     */
    public record DeleteOffsetsStart(Errors error, String message,
                                     List<DeleteShareGroupOffsetsResponseData.DeleteShareGroupOffsetsResponseTopic>
                                         errors,
                                     Optional<DeleteShareGroupStateRequestData> delete) {
    }

    /**
     * The start of DeleteGroups for a share group: GROUP_ID_NOT_FOUND when {@code groupId} is no share group (the
     * ordinary deletion answers it), NON_EMPTY_GROUP, a write error, or NONE with the DeleteShareGroupState of its
     * share-partitions to send before the group goes.
     */
    public record GroupDeleteStart(Errors error, Optional<DeleteShareGroupStateRequestData> delete) {
    }

    /**
     * Kafka's {@code GroupMetadataManager.shareGroup} then {@code validateEmptyGroup}: GROUP_ID_NOT_FOUND for an
     * unknown group or one of another type, NON_EMPTY_GROUP while it has members.
     */
    private ShareGroup emptyShareGroup(String groupId) {
        ShareGroup group = groups.get(groupId);
        if (group == null) {
            throw Errors.GROUP_ID_NOT_FOUND.exception(otherGroupTypeExists.test(groupId)
                ? "Group " + groupId + " is not a share group." : "Group " + groupId + " not found.");
        }
        if (group.state() != ShareGroup.State.EMPTY) {
            throw Errors.NON_EMPTY_GROUP.exception();
        }
        return group;
    }

    /**
     * AlterShareGroupOffsets (Kafka's {@code alterShareGroupOffsets}): the group must be an Empty share group; the
     * existing share-partitions asked for become initializing (and leave deleting), recorded, and the answer comes
     * with the InitializeShareGroupState that sets their start offsets. Unknown topics and partitions are
     * UNKNOWN_TOPIC_OR_PARTITION.
     */
    public CompletableFuture<AlterResult> alterOffsets(String groupId, AlterShareGroupOffsetsRequestData request) {
        ShareGroup group;
        try {
            group = emptyShareGroup(groupId);
        } catch (ApiException e) {
            return CompletableFuture.completedFuture(new AlterResult(alterError(Errors.forException(e),
                e.getMessage()), Optional.empty()));
        }
        ShareGroupOffsets.Alter alter = ShareGroupOffsets.alter(groupId, group.groupEpoch(), request, topics.get(),
            ctx.nowMs());
        if (alter.initializing().isEmpty()) {
            return CompletableFuture.completedFuture(new AlterResult(alter.response(), Optional.empty()));
        }
        Snapshot before = snapshot(groupId);
        SharePartitionStates next = ShareGroupOffsets.initializing(states(groupId), alter.initializing());
        states.put(groupId, next);
        return write(List.of(ShareGroupRecords.statePartitions(groupId, next))).handle((ignored, failure) -> {
            if (failure == null) {
                return new AlterResult(alter.response(), Optional.of(alter.initialize()));
            }
            restore(before, false);
            Errors error = CoordinatorWriteErrors.operationError(failure);
            return new AlterResult(alterError(error, error.message()), Optional.empty());
        });
    }

    private static AlterShareGroupOffsetsResponseData alterError(Errors error, String message) {
        return new AlterShareGroupOffsetsResponseData().setErrorCode(error.code())
            .setErrorMessage(message == null ? error.message() : message);
    }

    /**
     * DeleteShareGroupOffsets, first half (Kafka's {@code initiateDeleteShareGroupOffsets}): the group must be an
     * Empty share group; the initialized topics asked for move to deleting, recorded, and their share-partitions'
     * DeleteShareGroupState comes back to be sent. A group without share-partition state answers nothing.
     */
    public CompletableFuture<DeleteOffsetsStart> startDeleteOffsets(String groupId,
                                                                    DeleteShareGroupOffsetsRequestData request) {
        try {
            emptyShareGroup(groupId);
        } catch (ApiException e) {
            return CompletableFuture.completedFuture(new DeleteOffsetsStart(Errors.forException(e), e.getMessage(),
                List.of(), Optional.empty()));
        }
        SharePartitionStates current = states.get(groupId);
        if (current == null) {
            return CompletableFuture.completedFuture(new DeleteOffsetsStart(Errors.NONE, null, List.of(),
                Optional.empty()));
        }
        ShareGroupOffsets.DeleteStart start = ShareGroupOffsets.deleteStart(groupId, request, current, topics.get());
        Snapshot before = snapshot(groupId);
        states.put(groupId, start.next());
        return write(List.of(ShareGroupRecords.statePartitions(groupId, start.next()))).handle((ignored, failure) -> {
            if (failure == null) {
                return new DeleteOffsetsStart(Errors.NONE, null, start.errors(), Optional.ofNullable(start.request()));
            }
            restore(before, false);
            Errors error = CoordinatorWriteErrors.operationError(failure);
            return new DeleteOffsetsStart(error, error.message(), List.of(), Optional.empty());
        });
    }

    /**
     * DeleteShareGroupOffsets, second half (Kafka's {@code completeDeleteShareGroupOffsets}): the topics whose state
     * the share coordinator deleted leave deleting, recorded.
     */
    public CompletableFuture<Void> completeDeleteOffsets(String groupId, Set<Uuid> deleted) {
        SharePartitionStates current = states.get(groupId);
        if (current == null) {
            return CompletableFuture.completedFuture(null);
        }
        Map<Uuid, String> deleting = new HashMap<>(current.deleting());
        deleting.keySet().removeAll(deleted);
        SharePartitionStates next = new SharePartitionStates(current.initializing(), current.initialized(), deleting);
        Snapshot before = snapshot(groupId);
        states.put(groupId, next);
        return write(List.of(ShareGroupRecords.statePartitions(groupId, next))).whenComplete((ignored, failure) -> {
            if (failure != null) {
                restore(before, false);
            }
        });
    }

    /**
     * DeleteGroups of a share group, first half (Kafka's {@code sharePartitionDeleteRequests}): an Empty share
     * group's share-partitions all move to deleting, recorded, and their DeleteShareGroupState comes back to be sent
     * before the group is deleted.
     */
    public CompletableFuture<GroupDeleteStart> startDeleteGroup(String groupId) {
        ShareGroup group = groups.get(groupId);
        if (group == null) {
            return CompletableFuture.completedFuture(new GroupDeleteStart(Errors.GROUP_ID_NOT_FOUND,
                Optional.empty()));
        }
        if (group.state() != ShareGroup.State.EMPTY) {
            return CompletableFuture.completedFuture(new GroupDeleteStart(Errors.NON_EMPTY_GROUP, Optional.empty()));
        }
        SharePartitionStates current = states.get(groupId);
        if (current == null) {
            return CompletableFuture.completedFuture(new GroupDeleteStart(Errors.NONE, Optional.empty()));
        }
        ShareGroupOffsets.GroupDelete delete = ShareGroupOffsets.groupDelete(groupId, current, topics.get());
        Snapshot before = snapshot(groupId);
        states.put(groupId, delete.next());
        return write(List.of(ShareGroupRecords.statePartitions(groupId, delete.next()))).handle((ignored, failure) -> {
            if (failure == null) {
                return new GroupDeleteStart(Errors.NONE, Optional.ofNullable(delete.request()));
            }
            restore(before, false);
            return new GroupDeleteStart(CoordinatorWriteErrors.operationError(failure), Optional.empty());
        });
    }

    /** The share groups with share-partition state (initialized or initializing) of any of {@code topicIds}. */
    public Set<String> groupsWithStateOf(Set<Uuid> topicIds) {
        Set<String> found = new HashSet<>();
        states.forEach((groupId, current) -> {
            for (Uuid id : topicIds) {
                if (current.initialized().containsKey(id) || current.initializing().containsKey(id)) {
                    found.add(groupId);
                    return;
                }
            }
        });
        return found;
    }

    /**
     * Topics deleted from the cluster, first half (Kafka's {@code maybeCleanupShareGroupState}): the group's
     * share-partitions of the {@code deleted} topics move to deleting, recorded, and their DeleteShareGroupState comes
     * back to be sent (empty when the group has none); {@link #completeDeleteOffsets} is the second half.
     */
    public CompletableFuture<Optional<DeleteShareGroupStateRequestData>> startTopicsDeleted(String groupId,
            Map<Uuid, String> deleted) {
        SharePartitionStates current = states.get(groupId);
        if (current == null) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        ShareGroupOffsets.GroupDelete cleanup = ShareGroupOffsets.topicsDeleted(groupId, current, deleted);
        if (cleanup.request() == null) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        Snapshot before = snapshot(groupId);
        states.put(groupId, cleanup.next());
        return write(List.of(ShareGroupRecords.statePartitions(groupId, cleanup.next()))).handle((ignored, failure) -> {
            if (failure == null) {
                return Optional.of(cleanup.request());
            }
            restore(before, false);
            throw new CompletionException(failure);
        });
    }

    // ------------------------------------------------------------------ ListGroups, DeleteGroups, describe

    /** The groups as ListGroups reports them (protocol type and type "share"), filtered by state and type. */
    public List<ListGroupsResponseData.ListedGroup> list(Set<String> statesFilter, Set<String> typesFilter) {
        return ShareGroupHeartbeats.list(groups.values(), statesFilter, typesFilter);
    }

    /** DeleteGroups' check: NON_EMPTY_GROUP unless the group is Empty. */
    public Errors validateDeleteGroup(String groupId) {
        ShareGroup group = groups.get(groupId);
        if (group == null) {
            return Errors.GROUP_ID_NOT_FOUND;
        }
        return group.state() == ShareGroup.State.EMPTY ? Errors.NONE : Errors.NON_EMPTY_GROUP;
    }

    /** Forgets an Empty group and returns the tombstones that delete it, for the caller to write. */
    public List<CoordinatorRecord> deleteGroup(String groupId) {
        ShareGroup group = groups.remove(groupId);
        if (group == null) {
            return List.of();
        }
        states.remove(groupId);
        shapes.remove(groupId);
        group.markDead();
        LOGGER.info("[GroupId {}] Share group deleted at epoch {}.", groupId, group.groupEpoch());
        return ShareGroupRecords.groupTombstones(group);
    }

    /** The group as ShareGroupDescribe reports it (GROUP_ID_NOT_FOUND for an unknown group or one of another type). */
    public ShareGroupDescribeResponseData.DescribedGroup describe(String groupId) {
        return ShareGroupHeartbeats.describe(groupId, groups.get(groupId), otherGroupTypeExists.test(groupId),
            topics.get());
    }

    // ------------------------------------------------------------------------------------------------- loading

    /** Applies one share group record (types 10-15) while the shard loads. */
    public void replay(CoordinatorRecord record) {
        ShareGroupReplay.replay(groups, states, record, ctx.nowMs());
    }

    /** Ends the load: every member must heartbeat within the session timeout, counted from now. */
    public void onLoaded() {
        for (ShareGroup group : groups.values()) {
            refreshShape(group);
            LOGGER.info("[GroupId {}] Loaded share group in state {} at epoch {} with {} members.", group.groupId(),
                group.state().displayName(), group.groupEpoch(), group.numMembers());
            group.members().forEach(m -> scheduleSessionTimeout(group.groupId(), m.memberId()));
        }
    }

    /** The shard is lost: the groups go (the runtime cancels the timers). */
    public void unload() {
        groups.values().forEach(ShareGroup::markDead);
        groups.clear();
        states.clear();
        shapes.clear();
    }
}
