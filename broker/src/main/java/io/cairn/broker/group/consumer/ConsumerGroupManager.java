package io.cairn.broker.group.consumer;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.coordinator.CoordinatorWriteErrors;
import io.cairn.broker.coordinator.ShardContext;
import io.cairn.broker.group.GroupConfigs;
import io.cairn.broker.group.assignor.GroupAssignment;
import io.cairn.broker.group.assignor.PartitionAssignor;
import io.cairn.wire.error.ApiException;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ConsumerGroupDescribeResponseData;
import io.cairn.wire.message.ConsumerGroupHeartbeatRequestData;
import io.cairn.wire.message.ConsumerGroupHeartbeatResponseData;
import io.cairn.wire.message.ListGroupsResponseData;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The KIP-848 consumer groups of one coordinator shard and their ConsumerGroupHeartbeat, by Kafka's rules
 * ({@code GroupMetadataManager.consumerGroupHeartbeat}). One heartbeat:
 *
 * <ol>
 *   <li>is checked (INVALID_REQUEST, UNSUPPORTED_ASSIGNOR, GROUP_ID_NOT_FOUND, UNKNOWN_MEMBER_ID,
 *       GROUP_MAX_SIZE_REACHED, FENCED_MEMBER_EPOCH, UNRELEASED_INSTANCE_ID, FENCED_INSTANCE_ID);</li>
 *   <li>creates or updates the member; a new member, a changed subscription or a change of the subscribed topics'
 *       partition counts bumps the group epoch;</li>
 *   <li>when the group epoch is ahead of the target assignment epoch, computes a new target assignment with the
 *       group's assignor (the one most members ask for, else the first of {@code group.consumer.assignors});</li>
 *   <li>reconciles the member towards its target ({@link MemberReconciler}) and answers its epoch, the heartbeat
 *       interval and, when it sent a full request or its assignment changed, its assignment.</li>
 * </ol>
 *
 * A member that does not heartbeat within {@code group.consumer.session.timeout.ms}, or does not revoke within its
 * rebalance timeout, is fenced: removed, its partitions released, the group epoch bumped. Epoch -1 leaves; -2 is a
 * static member leaving for a while (its instance id may rejoin with a new member id and takes over its
 * assignment).
 *
 * <p>A member may subscribe to a regular expression (RE2J syntax, as Kafka; INVALID_REGULAR_EXPRESSION when it does
 * not compile): the group resolves it against the topics' names when a member first subscribes to it, and again at a
 * heartbeat 10 s or more after the last resolution once a topic has been created since or the resolution is 10 min
 * old (Kafka's batching of refreshes; see {@link RegularExpressions}); the topics it matches count as subscribed.
 *
 * <p>Every change is written to {@code __consumer_offsets} as Kafka's records ({@link ConsumerGroupRecords}) and
 * the answer goes out once they are committed; a shard that loads replays them ({@link #replay}). The in-memory state
 * changes before the write completes; when the write fails, the group goes back to the copy taken before the change
 * (and every later change of the group still pending goes with it), as Kafka reverts its timeline snapshots.
 *
 * <p>Thread-safety: not thread-safe; every method and timer runs on the shard's thread ({@link ShardContext}).
 */
public final class ConsumerGroupManager {

    /** The member epoch of a member leaving the group. */
    public static final int LEAVE_GROUP_MEMBER_EPOCH = -1;
    /** The member epoch of a static member leaving for a while. */
    public static final int LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2;

    private static final Logger LOGGER = LogManager.getLogger(ConsumerGroupManager.class);

    private final ShardContext<CoordinatorRecord> ctx;
    private final ConsumerGroupConfig config;
    private final Map<String, PartitionAssignor> assignors;
    private final Supplier<ConsumerGroupTopics> topics;
    private final ClassicGroupLink classicGroups;
    private final ClassicProtocolMembers classicMembers;
    private final RegularExpressions regexes;
    private final Map<String, ConsumerGroup> groups = new HashMap<>();
    private final Map<String, Map<String, TopicShape>> subscriptionMetadata = new HashMap<>();
    private final Map<String, ArrayDeque<PendingChange>> pendingChanges = new HashMap<>();
    private long nextChange;
    private boolean unloaded;
    /** The undo of a group conversion made by the operation under way, handed to its write ({@link #writeChange}). */
    private Runnable conversionUndo;

    /** A group as it was before a change whose write is pending (null: it did not exist). */
    record Snapshot(String groupId, ConsumerGroup group, Map<String, TopicShape> shapes) {
    }

    /**
     * A change of a group whose write is pending, and what the group goes back to if it fails (with the undo of a
     * conversion between group types it made, or null).
     */
    private record PendingChange(long id, Snapshot before, Runnable undo) {
    }

    /** A subscribed topic as the target assignment saw it: a change bumps the group epoch. */
    private record TopicShape(Uuid topicId, int numPartitions) {
    }

    /** A manager that never replaces a classic group (see the full constructor). */
    public ConsumerGroupManager(ShardContext<CoordinatorRecord> ctx, ConsumerGroupConfig config,
                                List<PartitionAssignor> assignors,
                                Supplier<ConsumerGroupTopics> topics, Predicate<String> otherGroupTypeExists) {
        this(ctx, config, assignors, topics, ClassicGroupLink.refusing(otherGroupTypeExists));
    }

    /**
     * @param assignors     the assignors of {@code group.consumer.assignors}, by name
     * @param topics        the current topics (the broker's metadata image)
     * @param classicGroups the shard's classic groups: a classic group's id is not a consumer group's
     *                      (GROUP_ID_NOT_FOUND) unless it is empty (replaced) or can be upgraded, and a consumer group
     *                      left with classic members only is downgraded (both as on Kafka)
     */
    public ConsumerGroupManager(ShardContext<CoordinatorRecord> ctx, ConsumerGroupConfig config,
                                List<PartitionAssignor> assignors,
                                Supplier<ConsumerGroupTopics> topics, ClassicGroupLink classicGroups) {
        this.classicGroups = classicGroups;
        this.regexes = new RegularExpressions(ctx, topics);
        this.ctx = ctx;
        this.config = config;
        this.assignors = new TreeMap<>();
        assignors.forEach(a -> this.assignors.put(a.name(), a));
        for (String name : config.assignors()) {
            if (!this.assignors.containsKey(name)) {
                throw new IllegalArgumentException("Unknown assignor " + name + " in " + ConsumerGroupConfig.ASSIGNORS);
            }
        }
        this.assignors.keySet().retainAll(config.assignors());
        this.topics = topics;
        this.classicMembers = new ClassicProtocolMembers(this, ctx, config, topics);
    }

    /** The classic JoinGroup, SyncGroup, Heartbeat and LeaveGroup of members of these consumer groups. */
    public ClassicProtocolMembers classicMembers() {
        return classicMembers;
    }

    /** The group or null (for the classic members' operations). */
    ConsumerGroup groupOrNull(String groupId) {
        return groups.get(groupId);
    }

    /** The group, if this shard has it. */
    public Optional<ConsumerGroup> group(String groupId) {
        return Optional.ofNullable(groups.get(groupId));
    }

    /** The ids of this shard's consumer groups. */
    public Set<String> groupIds() {
        return Collections.unmodifiableSet(new HashSet<>(groups.keySet()));
    }

    /**
     * Handles one ConsumerGroupHeartbeat of {@code version}; errors are in the response.
     *
     * @param clientId   the request header's client id
     * @param clientHost the client's address ({@code /127.0.0.1})
     */
    public CompletableFuture<ConsumerGroupHeartbeatResponseData> heartbeat(
            String clientId, String clientHost, ConsumerGroupHeartbeatRequestData request, short version) {
        return heartbeat(clientId, clientHost, request, version, topic -> true);
    }

    /**
     * As above, for a caller who may describe the topics {@code describable} accepts: a regular expression it
     * subscribes to matches only those (Kafka resolves it with the request's principal).
     */
    public CompletableFuture<ConsumerGroupHeartbeatResponseData> heartbeat(
            String clientId, String clientHost, ConsumerGroupHeartbeatRequestData request, short version,
            Predicate<String> describable) {
        List<CoordinatorRecord> records = new ArrayList<>();
        ConsumerGroupHeartbeatResponseData response;
        Snapshot before = null;
        try {
            validate(request, version);
            before = snapshot(request.groupId());
            if (request.memberEpoch() == LEAVE_GROUP_MEMBER_EPOCH
                    || request.memberEpoch() == LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
                response = leave(request, records);
            } else {
                response = join(clientId, clientHost, request, records, describable);
            }
        } catch (ApiException e) {
            if (before != null) {
                restore(before);
            }
            undoConversion();
            return CompletableFuture.completedFuture(errorResponse(request.groupId(), Errors.forException(e), e));
        }
        if (records.isEmpty()) {
            conversionUndo = null;
            return CompletableFuture.completedFuture(response);
        }
        return writeChange(before, records).handle((ignored, failure) -> failure == null ? response
            : errorResponse(request.groupId(), CoordinatorWriteErrors.operationError(failure), failure));
    }

    // ------------------------------------------------------------------------------ writes and their reverts

    /** Undoes the conversion the failed operation under way made, if any. */
    void undoConversion() {
        Runnable undo = conversionUndo;
        conversionUndo = null;
        if (undo != null) {
            undo.run();
        }
    }

    Snapshot snapshot(String groupId) {
        ConsumerGroup group = groups.get(groupId);
        Map<String, TopicShape> shapes = subscriptionMetadata.get(groupId);
        return new Snapshot(groupId, group == null ? null : group.copy(), shapes == null ? null : Map.copyOf(shapes));
    }

    /**
     * Writes the records of a change made to a group since {@code before}; if the write fails, the group goes back
     * to {@code before}, with every later change of it whose write is still pending.
     */
    CompletableFuture<Void> writeChange(Snapshot before, List<CoordinatorRecord> records) {
        long id = ++nextChange;
        Runnable undo = conversionUndo;
        conversionUndo = null;
        pendingChanges.computeIfAbsent(before.groupId(), g -> new ArrayDeque<>()).addLast(new PendingChange(id,
            before, undo));
        return write(records).whenComplete((ignored, failure) -> {
            ArrayDeque<PendingChange> pending = pendingChanges.get(before.groupId());
            if (pending == null || unloaded) {
                return;
            }
            if (failure == null) {
                while (!pending.isEmpty() && pending.peekFirst().id() <= id) {
                    pending.pollFirst();
                }
            } else if (pending.stream().anyMatch(change -> change.id() == id)) {
                // This change and every later one of the group (computed from it) are undone, conversions last first.
                while (!pending.isEmpty() && pending.peekLast().id() >= id) {
                    Runnable later = pending.pollLast().undo();
                    if (later != null) {
                        later.run();
                    }
                }
                LOGGER.warn("[GroupId {}] Reverting a change whose write failed: {}", before.groupId(),
                    CoordinatorWriteErrors.operationError(failure));
                restore(before);
            }
            if (pending.isEmpty()) {
                pendingChanges.remove(before.groupId());
            }
        });
    }

    /** Puts the group back as it was in {@code before}, with its members' timers. */
    void restore(Snapshot before) {
        String groupId = before.groupId();
        ConsumerGroup current = groups.get(groupId);
        if (current != null) {
            for (ConsumerGroupMember member : current.members()) {
                if (before.group() == null || !before.group().hasMember(member.memberId())) {
                    cancelTimers(groupId, member.memberId());
                }
            }
        }
        if (before.group() == null) {
            groups.remove(groupId);
            subscriptionMetadata.remove(groupId);
            return;
        }
        ConsumerGroup restored = before.group().copy();
        groups.put(groupId, restored);
        if (before.shapes() == null) {
            subscriptionMetadata.remove(groupId);
        } else {
            subscriptionMetadata.put(groupId, new HashMap<>(before.shapes()));
        }
        for (ConsumerGroupMember member : restored.members()) {
            scheduleSessionTimeout(groupId, member.memberId());
            if (member.state() == MemberState.UNREVOKED_PARTITIONS && !member.useClassicProtocol()) {
                scheduleRebalanceTimeout(groupId, member.memberId(), member.memberEpoch(),
                    member.rebalanceTimeoutMs());
            } else {
                ctx.cancel(rebalanceKey(groupId, member.memberId()));
            }
        }
    }

    private static ConsumerGroupHeartbeatResponseData errorResponse(String groupId, Errors error, Throwable cause) {
        if (error == Errors.UNKNOWN_SERVER_ERROR) {
            LOGGER.error("ConsumerGroupHeartbeat of group {} failed", groupId, cause);
        }
        return new ConsumerGroupHeartbeatResponseData().setErrorCode(error.code())
            .setErrorMessage(cause instanceof ApiException ? cause.getMessage() : error.message());
    }

    private CompletableFuture<Void> write(List<CoordinatorRecord> records) {
        try {
            return ctx.write(records);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private void validate(ConsumerGroupHeartbeatRequestData request, short version) {
        int epoch = request.memberEpoch();
        if (version >= 1 || epoch > 0 || epoch == LEAVE_GROUP_MEMBER_EPOCH) {
            // From version 1 (KIP-1082) the client generates its member id.
            requireNonEmpty(request.memberId(), "MemberId can't be empty.");
        }
        requireNonEmpty(request.groupId(), "GroupId can't be empty.");
        requireNonEmpty(request.instanceId(), "InstanceId can't be empty.");
        requireNonEmpty(request.rackId(), "RackId can't be empty.");
        if (epoch == 0) {
            if (request.rebalanceTimeoutMs() == -1) {
                throw Errors.INVALID_REQUEST.exception("RebalanceTimeoutMs must be provided in first request.");
            }
            if (request.topicPartitions() == null || !request.topicPartitions().isEmpty()) {
                throw Errors.INVALID_REQUEST.exception("TopicPartitions must be empty when (re-)joining.");
            }
            if (request.subscribedTopicNames() == null && request.subscribedTopicRegex() == null) {
                throw Errors.INVALID_REQUEST.exception("Either SubscribedTopicNames or SubscribedTopicRegex must be"
                    + " non-null when (re-)joining.");
            }
        } else if (epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
            if (request.instanceId() == null) {
                throw Errors.INVALID_REQUEST.exception("InstanceId can't be null.");
            }
        } else if (epoch < LEAVE_GROUP_MEMBER_EPOCH) {
            throw Errors.INVALID_REQUEST.exception("MemberEpoch is invalid.");
        }
        if (request.serverAssignor() != null && !assignors.containsKey(request.serverAssignor())) {
            throw Errors.UNSUPPORTED_ASSIGNOR.exception("ServerAssignor " + request.serverAssignor()
                + " is not supported. Supported assignors: " + String.join(", ", assignors.keySet()) + ".");
        }
    }

    private static void requireNonEmpty(String value, String message) {
        if (value != null && value.trim().isEmpty()) {
            throw Errors.INVALID_REQUEST.exception(message);
        }
    }

    // ------------------------------------------------------------------------------------------------- joining

    private ConsumerGroupHeartbeatResponseData join(String clientId, String clientHost,
                                                    ConsumerGroupHeartbeatRequestData request,
                                                    List<CoordinatorRecord> records, Predicate<String> describable) {
        String groupId = request.groupId();
        int epoch = request.memberEpoch();
        boolean joining = epoch == 0;
        ConsumerGroup group = groupOrCreate(groupId, joining, records);
        String memberId = request.memberId() == null || request.memberId().isEmpty() ? newMemberId()
            : request.memberId();
        if (group.numMembers() >= config.maxSize() && !group.hasMember(memberId)) {
            throw Errors.GROUP_MAX_SIZE_REACHED.exception("The consumer group has reached its maximum capacity of "
                + config.maxSize() + " members.");
        }
        Map<Uuid, Set<Integer>> owned = owned(request.topicPartitions());
        ConsumerGroupMember member = request.instanceId() == null
            ? dynamicMember(group, memberId, epoch, owned)
            : staticMember(group, memberId, epoch, request.instanceId(), owned);
        ConsumerGroupMember updated = member.withSubscription(
            request.subscribedTopicNames() == null ? member.subscribedTopicNames() : request.subscribedTopicNames(),
            request.subscribedTopicRegex() == null ? member.subscribedTopicRegex() : request.subscribedTopicRegex(),
            request.serverAssignor() == null ? member.serverAssignorName() : request.serverAssignor(),
            request.rackId() == null ? member.rackId() : request.rackId(), clientId, clientHost,
            request.rebalanceTimeoutMs() == -1 ? member.rebalanceTimeoutMs() : request.rebalanceTimeoutMs());
        String oldRegex = member.subscribedTopicRegex();
        String newRegex = updated.subscribedTopicRegex();
        if (newRegex != null && !newRegex.equals(oldRegex) && group.numSubscribedMembers(newRegex) == 0) {
            RegularExpressions.requireValid(newRegex);
        }
        // A new member has no subscription yet; a static member taking over its instance id keeps its predecessor's,
        // so that a restart with the same subscription does not rebalance the group.
        boolean bump = !updated.subscribedTopicNames().equals(member.subscribedTopicNames())
            || !Objects.equals(oldRegex, newRegex);
        boolean changed = !group.hasMember(memberId) || !ConsumerGroupRecords.memberSubscription(groupId, updated)
            .equals(ConsumerGroupRecords.memberSubscription(groupId, member));
        replaceStaticPredecessor(group, updated, records);
        group.updateMember(updated);
        if (changed) {
            records.add(ConsumerGroupRecords.memberSubscription(groupId, updated));
        }
        bump |= regexes.update(group, oldRegex, newRegex, describable, records);
        bump |= refreshSubscriptionMetadata(group);
        if (bump) {
            group.setGroupEpoch(group.groupEpoch() + 1);
            records.add(ConsumerGroupRecords.groupEpoch(groupId, group.groupEpoch()));
            LOGGER.info("[GroupId {}] Bumped group epoch to {}.", groupId, group.groupEpoch());
        }
        if (group.groupEpoch() > group.targetAssignmentEpoch()) {
            updateTargetAssignment(group, records);
        }
        ConsumerGroupMember reconciled = reconcile(group, group.member(memberId), owned, records);
        scheduleSessionTimeout(groupId, memberId);
        ConsumerGroupHeartbeatResponseData response = new ConsumerGroupHeartbeatResponseData().setMemberId(memberId)
            .setMemberEpoch(reconciled.memberEpoch())
            .setHeartbeatIntervalMs(groupValue(groupId, GroupConfigs.CONSUMER_HEARTBEAT_INTERVAL_MS,
                config.heartbeatIntervalMs()));
        // A full request (every non-optional field: a client sends one after a lost response) gets the assignment,
        // whether the member subscribes by names or by a regular expression.
        boolean fullRequest = joining || (request.rebalanceTimeoutMs() != -1
            && (request.subscribedTopicNames() != null || request.subscribedTopicRegex() != null)
            && request.topicPartitions() != null);
        if (fullRequest || !reconciled.assignedPartitions().equals(member.assignedPartitions())) {
            response.setAssignment(assignment(reconciled.assignedPartitions()));
        }
        return response;
    }

    private ConsumerGroup groupOrCreate(String groupId, boolean create, List<CoordinatorRecord> records) {
        ConsumerGroup group = groups.get(groupId);
        if (group == null && classicGroups.exists(groupId)) {
            if (!create) {
                throw Errors.GROUP_ID_NOT_FOUND.exception("Group " + groupId + " is not a consumer group.");
            }
            List<CoordinatorRecord> replaced = classicGroups.replaceEmpty(groupId);
            if (replaced != null) {
                // Kafka replaces an empty classic group (one that only committed offsets, say) by the consumer group.
                LOGGER.info("[GroupId {}] Converted the empty classic group to a consumer group.", groupId);
                records.addAll(replaced);
            } else {
                group = upgrade(groupId, records);
            }
        }
        if (group == null) {
            if (!create) {
                throw Errors.GROUP_ID_NOT_FOUND.exception("Consumer group " + groupId + " not found.");
            }
            group = new ConsumerGroup(groupId);
            groups.put(groupId, group);
        }
        return group;
    }

    /**
     * Kafka's online upgrade: the classic group with members becomes a consumer group whose members speak the classic
     * protocol, each with its session timer; GROUP_ID_NOT_FOUND when it cannot be upgraded.
     */
    private ConsumerGroup upgrade(String groupId, List<CoordinatorRecord> records) {
        ClassicGroupLink.Conversion<ConsumerGroup> upgraded = config.migrationPolicy().isUpgradeEnabled()
            ? classicGroups.upgrade(groupId) : null;
        if (upgraded == null) {
            throw Errors.GROUP_ID_NOT_FOUND.exception("Group " + groupId + " is not a consumer group.");
        }
        ConsumerGroup group = upgraded.result();
        records.addAll(upgraded.records());
        conversionUndo = upgraded.undo();
        groups.put(groupId, group);
        refreshSubscriptionMetadata(group);
        group.members().forEach(member -> scheduleSessionTimeout(groupId, member.memberId()));
        LOGGER.info("[GroupId {}] Upgraded the classic group with {} members to a consumer group at epoch {}.",
            groupId, group.numMembers(), group.groupEpoch());
        return group;
    }

    static String newMemberId() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        return new Uuid(random.nextLong(), random.nextLong()).toString();
    }

    static ConsumerGroupMember newMember(String memberId, String instanceId) {
        return new ConsumerGroupMember(memberId, instanceId, null, 0, 0, MemberState.STABLE, "", "", List.of(), null,
            null, -1, Map.of(), Map.of());
    }

    private ConsumerGroupMember dynamicMember(ConsumerGroup group, String memberId, int epoch,
                                              Map<Uuid, Set<Integer>> owned) {
        ConsumerGroupMember member = group.member(memberId);
        if (member == null) {
            if (epoch != 0) {
                throw Errors.UNKNOWN_MEMBER_ID.exception("Member " + memberId + " is not a member of group "
                    + group.groupId() + ".");
            }
            LOGGER.info("[GroupId {}] Member {} joins the consumer group.", group.groupId(), memberId);
            return newMember(memberId, null);
        }
        checkEpoch(member, epoch, owned);
        return member;
    }

    private ConsumerGroupMember staticMember(ConsumerGroup group, String memberId, int epoch, String instanceId,
                                             Map<Uuid, Set<Integer>> owned) {
        String existingId = group.staticMemberId(instanceId);
        ConsumerGroupMember existing = existingId == null ? null : group.member(existingId);
        if (epoch == 0) {
            if (existing == null) {
                LOGGER.info("[GroupId {}] Static member {} with instance id {} joins the consumer group.",
                    group.groupId(), memberId, instanceId);
                return newMember(memberId, instanceId);
            }
            if (existing.memberEpoch() != LEAVE_GROUP_STATIC_MEMBER_EPOCH && !existing.useClassicProtocol()) {
                throw Errors.UNRELEASED_INSTANCE_ID.exception("Static member " + memberId + " with instance id "
                    + instanceId + " cannot join the group because the instance id is owned by " + existingId
                    + " member.");
            }
            LOGGER.info("[GroupId {}] Static member with instance id {} rejoins as member {}, replacing {}.",
                group.groupId(), instanceId, memberId, existingId);
            // The new member takes over the old one's assignment at epoch 0 (it is reconciled from there).
            return new ConsumerGroupMember(memberId, instanceId, existing.rackId(), 0, 0, existing.state(),
                existing.clientId(), existing.clientHost(), existing.subscribedTopicNames(),
                existing.subscribedTopicRegex(), existing.serverAssignorName(), existing.rebalanceTimeoutMs(),
                existing.assignedPartitions(), existing.partitionsPendingRevocation());
        }
        if (existing == null) {
            throw Errors.UNKNOWN_MEMBER_ID.exception("Instance id " + instanceId + " is unknown.");
        }
        if (!existing.memberId().equals(memberId)) {
            throw Errors.FENCED_INSTANCE_ID.exception("Static member " + memberId + " with instance id " + instanceId
                + " was fenced by member " + existingId + ".");
        }
        checkEpoch(existing, epoch, owned);
        return existing;
    }

    /** The old member of a static member's instance id leaves when its successor joins, handing it its target. */
    void replaceStaticPredecessor(ConsumerGroup group, ConsumerGroupMember member,
                                          List<CoordinatorRecord> records) {
        String previous = group.staticMemberId(member.instanceId());
        if (previous != null && !previous.equals(member.memberId())) {
            Map<Uuid, Set<Integer>> target = group.targetAssignment(previous);
            cancelTimers(group.groupId(), previous);
            group.removeMember(previous);
            group.setTargetAssignment(member.memberId(), target);
            records.addAll(ConsumerGroupRecords.memberTombstones(group.groupId(), previous));
            records.add(ConsumerGroupRecords.targetAssignment(group.groupId(), member.memberId(), target));
        }
    }

    /**
     * Kafka's epoch check: an epoch ahead of the member's is fenced; one behind is fenced too, unless it is the
     * previous epoch and the member owns no partition it is not assigned (the response with the new epoch was lost).
     */
    private static void checkEpoch(ConsumerGroupMember member, int received, Map<Uuid, Set<Integer>> owned) {
        if (received > member.memberEpoch()) {
            throw Errors.FENCED_MEMBER_EPOCH.exception("The consumer group member has a greater member epoch ("
                + received + ") than the one known by the group coordinator (" + member.memberEpoch()
                + "). The member must abandon all its partitions and rejoin.");
        }
        if (received < member.memberEpoch()
                && (received != member.previousMemberEpoch() || !isSubset(owned, member.assignedPartitions()))) {
            throw Errors.FENCED_MEMBER_EPOCH.exception("The consumer group member has a smaller member epoch ("
                + received + ") than the one known by the group coordinator (" + member.memberEpoch()
                + "). The member must abandon all its partitions and rejoin.");
        }
    }

    private static boolean isSubset(Map<Uuid, Set<Integer>> owned, Map<Uuid, Set<Integer>> assigned) {
        if (owned == null) {
            return false;
        }
        for (Map.Entry<Uuid, Set<Integer>> topic : owned.entrySet()) {
            if (!assigned.getOrDefault(topic.getKey(), Set.of()).containsAll(topic.getValue())) {
                return false;
            }
        }
        return true;
    }

    /**
     * Records the subscribed topics' ids and partition counts; true when they changed since the last target
     * assignment (a topic created, deleted or grown), which bumps the group epoch.
     */
    boolean refreshSubscriptionMetadata(ConsumerGroup group) {
        ConsumerGroupTopics current = topics.get();
        Map<String, TopicShape> shapes = new HashMap<>();
        for (String name : group.subscribedTopicNames()) {
            Uuid id = current.topicId(name);
            if (id != null) {
                shapes.put(name, new TopicShape(id, current.numPartitions(id)));
            }
        }
        Map<String, TopicShape> previous = subscriptionMetadata.put(group.groupId(), shapes);
        return previous != null && !previous.equals(shapes);
    }

    void updateTargetAssignment(ConsumerGroup group, List<CoordinatorRecord> records) {
        String assignorName = group.preferredAssignor(config.defaultAssignor());
        PartitionAssignor assignor = assignors.get(assignorName);
        GroupAssignment assignment;
        try {
            assignment = group.computeTargetAssignment(assignor, topics.get());
        } catch (PartitionAssignor.PartitionAssignorException e) {
            throw Errors.UNKNOWN_SERVER_ERROR.exception("Failed to compute a new target assignment for epoch "
                + group.groupEpoch() + ": " + e.getMessage());
        }
        for (ConsumerGroupMember member : group.members()) {
            Map<Uuid, Set<Integer>> target = assignment.partitionsOf(member.memberId());
            if (!target.equals(group.targetAssignment(member.memberId()))) {
                records.add(ConsumerGroupRecords.targetAssignment(group.groupId(), member.memberId(), target));
            }
        }
        group.setTargetAssignment(group.groupEpoch(), assignment);
        records.add(ConsumerGroupRecords.targetAssignmentEpoch(group.groupId(), group.groupEpoch()));
        LOGGER.info("[GroupId {}] Computed a new target assignment for epoch {} with '{}' assignor.",
            group.groupId(), group.groupEpoch(), assignorName);
    }

    ConsumerGroupMember reconcile(ConsumerGroup group, ConsumerGroupMember member,
                                          Map<Uuid, Set<Integer>> owned, List<CoordinatorRecord> records) {
        int targetEpoch = group.targetAssignmentEpoch();
        if (member.state() == MemberState.STABLE && member.memberEpoch() == targetEpoch) {
            return member;
        }
        ConsumerGroupMember next = MemberReconciler.reconcile(member, targetEpoch,
            group.targetAssignment(member.memberId()), group::partitionEpoch, owned);
        if (!next.equals(member)) {
            group.updateMember(next);
            records.add(ConsumerGroupRecords.currentAssignment(group.groupId(), next));
            if (next.useClassicProtocol()) {
                // A classic member has its join and sync timers instead (ClassicProtocolMembers).
                ctx.cancel(rebalanceKey(group.groupId(), next.memberId()));
            } else if (next.state() == MemberState.UNREVOKED_PARTITIONS) {
                scheduleRebalanceTimeout(group.groupId(), next.memberId(), next.memberEpoch(),
                    next.rebalanceTimeoutMs());
            } else {
                ctx.cancel(rebalanceKey(group.groupId(), next.memberId()));
            }
        }
        return next;
    }

    // ------------------------------------------------------------------------------------------------- leaving

    private ConsumerGroupHeartbeatResponseData leave(ConsumerGroupHeartbeatRequestData request,
                                                     List<CoordinatorRecord> records) {
        ConsumerGroup group = groups.get(request.groupId());
        if (group == null) {
            throw Errors.GROUP_ID_NOT_FOUND.exception("Consumer group " + request.groupId() + " not found.");
        }
        String memberId = request.memberId();
        ConsumerGroupMember member;
        if (request.instanceId() == null) {
            member = group.member(memberId);
            if (member == null) {
                throw Errors.UNKNOWN_MEMBER_ID.exception("Member " + memberId + " is not a member of group "
                    + group.groupId() + ".");
            }
        } else {
            String existingId = group.staticMemberId(request.instanceId());
            if (existingId == null) {
                throw Errors.UNKNOWN_MEMBER_ID.exception("Instance id " + request.instanceId() + " is unknown.");
            }
            if (!existingId.equals(memberId)) {
                throw Errors.FENCED_INSTANCE_ID.exception("Static member " + memberId + " with instance id "
                    + request.instanceId() + " was fenced by member " + existingId + ".");
            }
            member = group.member(existingId);
            if (request.memberEpoch() == LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
                LOGGER.info("[GroupId {}] Static member {} with instance id {} temporarily left the consumer group.",
                    group.groupId(), memberId, request.instanceId());
                ConsumerGroupMember leaving = member.reconciled(member.state(), LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                    member.assignedPartitions(), Map.of());
                group.updateMember(leaving);
                records.add(ConsumerGroupRecords.currentAssignment(group.groupId(), leaving));
                return new ConsumerGroupHeartbeatResponseData().setMemberId(memberId)
                    .setMemberEpoch(LEAVE_GROUP_STATIC_MEMBER_EPOCH);
            }
        }
        LOGGER.info("[GroupId {}] Member {} left the consumer group.", group.groupId(), memberId);
        records.addAll(fence(group, member));
        return new ConsumerGroupHeartbeatResponseData().setMemberId(memberId).setMemberEpoch(request.memberEpoch());
    }

    /**
     * Removes the member: its partitions are released and the group epoch bumped; returns the records. When only
     * members speaking the classic protocol remain, the group is downgraded to a classic group instead (Kafka's
     * {@code consumerGroupFenceMember}).
     */
    List<CoordinatorRecord> fence(ConsumerGroup group, ConsumerGroupMember member) {
        if (canDowngrade(group, member.memberId())) {
            return downgrade(group, member.memberId());
        }
        List<CoordinatorRecord> records = new ArrayList<>(ConsumerGroupRecords.memberTombstones(group.groupId(),
            member.memberId()));
        group.removeMember(member.memberId());
        String regex = member.subscribedTopicRegex();
        if (regex != null && group.numSubscribedMembers(regex) == 0 && group.resolvedRegularExpression(regex) != null) {
            // The last member subscribed to it is gone: so is its resolution.
            group.removeResolvedRegularExpression(regex);
            records.add(ConsumerGroupRecords.regularExpressionTombstone(group.groupId(), regex));
        }
        refreshSubscriptionMetadata(group);
        group.setGroupEpoch(group.groupEpoch() + 1);
        cancelTimers(group.groupId(), member.memberId());
        records.add(ConsumerGroupRecords.groupEpoch(group.groupId(), group.groupEpoch()));
        LOGGER.info("[GroupId {}] Member {} removed; bumped group epoch to {}.", group.groupId(), member.memberId(),
            group.groupEpoch());
        return records;
    }

    /**
     * Kafka's {@code validateOnlineDowngradeWithReplacedMemberId}: a classic JoinGroup replacing static member
     * {@code replacedMemberId}, the last member speaking the consumer protocol, downgrades the group.
     */
    boolean canDowngradeOnReplacement(ConsumerGroup group, String replacedMemberId) {
        return group.allMembersUseClassicProtocolExcept(replacedMemberId)
            && config.migrationPolicy().isDowngradeEnabled() && group.numMembers() <= config.classicMaxSize();
    }

    /** Kafka's {@code validateOnlineDowngradeWithFencedMember}. */
    private boolean canDowngrade(ConsumerGroup group, String leavingMemberId) {
        if (!group.allMembersUseClassicProtocolExcept(leavingMemberId) || group.numMembers() <= 1) {
            return false;
        }
        if (!config.migrationPolicy().isDowngradeEnabled()) {
            LOGGER.info("[GroupId {}] Cannot downgrade the consumer group to a classic group: the online downgrade is"
                + " disabled.", group.groupId());
            return false;
        }
        if (group.numMembers() - 1 > config.classicMaxSize()) {
            LOGGER.info("[GroupId {}] Cannot downgrade the consumer group to a classic group: it is larger than the"
                + " classic group max size.", group.groupId());
            return false;
        }
        return true;
    }

    /**
     * The consumer group becomes a classic group of its members but {@code leavingMemberId} (null: of all its members,
     * after a static member's replacement, without a rebalance): it is forgotten here, its tombstones and the classic
     * group's record returned.
     */
    List<CoordinatorRecord> downgrade(ConsumerGroup group, String leavingMemberId) {
        String groupId = group.groupId();
        ClassicGroupLink.Conversion<Void> downgraded = classicGroups.downgrade(group, leavingMemberId);
        List<CoordinatorRecord> records = new ArrayList<>(ConsumerGroupRecords.groupTombstones(group));
        records.addAll(downgraded.records());
        groups.remove(groupId);
        subscriptionMetadata.remove(groupId);
        group.members().forEach(member -> cancelTimers(groupId, member.memberId()));
        group.markDead();
        conversionUndo = downgraded.undo();
        LOGGER.info("[GroupId {}] Downgraded the consumer group to a classic group: {}.", groupId,
            leavingMemberId == null ? "the last member speaking the consumer protocol was replaced by a classic member"
                : "member " + leavingMemberId + ", the last speaking the consumer protocol, left");
        return records;
    }

    /** A timer fenced a member: its records are written with no one to answer. */
    void fenceOnTimer(ConsumerGroup group, ConsumerGroupMember member) {
        Snapshot before = snapshot(group.groupId());
        writeChange(before, fence(group, member)).whenComplete((ignored, failure) -> {
            if (failure != null) {
                LOGGER.warn("[GroupId {}] Cannot write the removal of member {}: {}", group.groupId(),
                    member.memberId(), CoordinatorWriteErrors.operationError(failure));
            }
        });
    }

    // -------------------------------------------------------------------------------------------------- timers

    /** The group's {@code consumer.*} config {@code key} ({@link GroupConfigs}), else the broker's value. */
    private int groupValue(String groupId, String key, int brokerValue) {
        return GroupConfigs.intValue(topics.get().groupConfigs(groupId), key, brokerValue);
    }

    /**
     * The member's session timer: its classic session timeout, or the group's consumer.session.timeout.ms, else
     * group.consumer.session.timeout.ms.
     */
    void scheduleSessionTimeout(String groupId, String memberId) {
        ConsumerGroup current = groups.get(groupId);
        ConsumerGroupMember scheduled = current == null ? null : current.member(memberId);
        int timeoutMs = scheduled != null && scheduled.useClassicProtocol()
            ? scheduled.classicMetadata().sessionTimeoutMs()
            : groupValue(groupId, GroupConfigs.CONSUMER_SESSION_TIMEOUT_MS, config.sessionTimeoutMs());
        ctx.schedule(sessionKey(groupId, memberId), timeoutMs, () -> {
            ConsumerGroup group = groups.get(groupId);
            ConsumerGroupMember member = group == null ? null : group.member(memberId);
            if (member != null) {
                LOGGER.info("[GroupId {}] Member {} fenced from the group because its session expired.", groupId,
                    memberId);
                fenceOnTimer(group, member);
            }
        });
    }

    private void scheduleRebalanceTimeout(String groupId, String memberId, int memberEpoch, int timeoutMs) {
        ctx.schedule(rebalanceKey(groupId, memberId), timeoutMs, () -> {
            ConsumerGroup group = groups.get(groupId);
            ConsumerGroupMember member = group == null ? null : group.member(memberId);
            if (member != null && member.memberEpoch() == memberEpoch) {
                LOGGER.info("[GroupId {}] Member {} fenced from the group because it failed to transition from epoch"
                    + " {} within {}ms.", groupId, memberId, memberEpoch, timeoutMs);
                fenceOnTimer(group, member);
            }
        });
    }

    void cancelTimers(String groupId, String memberId) {
        ctx.cancel(sessionKey(groupId, memberId));
        ctx.cancel(rebalanceKey(groupId, memberId));
        classicMembers.cancelTimers(groupId, memberId);
    }

    static String sessionKey(String groupId, String memberId) {
        // The length prefix keeps (group "a-b", member "c") and (group "a", member "b-c") apart.
        return "consumer-session-" + groupId.length() + "-" + groupId + "-" + memberId;
    }

    static String rebalanceKey(String groupId, String memberId) {
        return "consumer-rebalance-" + groupId.length() + "-" + groupId + "-" + memberId;
    }

    // ------------------------------------------------------------------------------------------------- helpers

    private static Map<Uuid, Set<Integer>> owned(List<ConsumerGroupHeartbeatRequestData.TopicPartitions> owned) {
        if (owned == null) {
            return null;
        }
        Map<Uuid, Set<Integer>> map = new HashMap<>();
        owned.forEach(tp -> map.computeIfAbsent(tp.topicId(), id -> new HashSet<>()).addAll(tp.partitions()));
        return map;
    }

    private static ConsumerGroupHeartbeatResponseData.Assignment assignment(Map<Uuid, Set<Integer>> partitions) {
        List<ConsumerGroupHeartbeatResponseData.TopicPartitions> list = new ArrayList<>();
        partitions.forEach((topicId, ids) -> list.add(new ConsumerGroupHeartbeatResponseData.TopicPartitions()
            .setTopicId(topicId).setPartitions(ids.stream().sorted().toList())));
        return new ConsumerGroupHeartbeatResponseData.Assignment().setTopicPartitions(list);
    }

    // ------------------------------------------------------------------------------- ListGroups, DeleteGroups

    /** See {@link ConsumerGroupDescriptions#list}. */
    public List<ListGroupsResponseData.ListedGroup> list(Set<String> statesFilter, Set<String> typesFilter) {
        return ConsumerGroupDescriptions.list(groups.values(), statesFilter, typesFilter);
    }

    /**
     * Deletes an Empty group (the caller checked {@link ConsumerGroup#validateDeleteGroup}): it is forgotten at once
     * and the returned tombstones are for the caller to write.
     */
    public List<CoordinatorRecord> deleteGroup(String groupId) {
        ConsumerGroup group = groups.remove(groupId);
        if (group == null) {
            return List.of();
        }
        subscriptionMetadata.remove(groupId);
        pendingChanges.remove(groupId);
        group.members().forEach(member -> cancelTimers(groupId, member.memberId()));
        group.markDead();
        LOGGER.info("[GroupId {}] Consumer group deleted at epoch {}.", groupId, group.groupEpoch());
        return ConsumerGroupRecords.groupTombstones(group);
    }

    // ------------------------------------------------------------------------------------------------ describe

    /** See {@link ConsumerGroupDescriptions#describe}. */
    public ConsumerGroupDescribeResponseData.DescribedGroup describe(String groupId, short version) {
        return ConsumerGroupDescriptions.describe(groupId, groups.get(groupId), classicGroups.exists(groupId),
            topics.get(), config.defaultAssignor(), version);
    }

    // ------------------------------------------------------------------------------------------------- loading

    /** Applies one consumer-group record (types 3, 5, 6, 7, 8, 16) while the shard loads. */
    public void replay(CoordinatorRecord record) {
        ConsumerGroupReplay.replay(groups, record, subscriptionMetadata::remove);
    }

    /**
     * Ends the load: every member must heartbeat within its session timeout, and a member revoking partitions
     * within its rebalance timeout, counted from now.
     */
    public void onLoaded() {
        for (ConsumerGroup group : groups.values()) {
            refreshSubscriptionMetadata(group);
            LOGGER.info("[GroupId {}] Loaded consumer group in state {} at epoch {} with {} members.",
                group.groupId(), group.state().displayName(), group.groupEpoch(), group.numMembers());
            for (ConsumerGroupMember member : group.members()) {
                scheduleSessionTimeout(group.groupId(), member.memberId());
                if (member.state() == MemberState.UNREVOKED_PARTITIONS && !member.useClassicProtocol()) {
                    scheduleRebalanceTimeout(group.groupId(), member.memberId(), member.memberEpoch(),
                        member.rebalanceTimeoutMs());
                }
            }
        }
    }

    /** The shard is lost: timers stop (the runtime cancels them) and the groups go. */
    public void unload() {
        unloaded = true;
        classicMembers.unload();
        groups.values().forEach(ConsumerGroup::markDead);
        groups.clear();
        subscriptionMetadata.clear();
        pendingChanges.clear();
    }
}
