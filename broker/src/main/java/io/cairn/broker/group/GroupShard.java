package io.cairn.broker.group;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.coordinator.CoordinatorShard;
import io.cairn.broker.coordinator.ShardContext;
import io.cairn.broker.group.assignor.RangeAssignor;
import io.cairn.broker.group.assignor.UniformAssignor;
import io.cairn.broker.group.consumer.ConsumerGroup;
import io.cairn.broker.group.consumer.ConsumerGroupConfig;
import io.cairn.broker.group.consumer.ConsumerGroupManager;
import io.cairn.broker.group.consumer.ConsumerGroupRecords;
import io.cairn.broker.group.consumer.ConsumerGroupTopics;
import io.cairn.broker.group.record.GroupMetadataKey;
import io.cairn.broker.group.share.ShareGroupConfig;
import io.cairn.broker.group.share.ShareGroupManager;
import io.cairn.broker.group.share.ShareGroupRecords;
import io.cairn.broker.group.record.GroupMetadataValue;
import io.cairn.broker.group.record.OffsetCommitKey;
import io.cairn.broker.group.record.OffsetCommitValue;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.apache.logging.log4j.Logger;

/**
 * The group coordinator state kept in one {@code __consumer_offsets} partition this broker leads, in one leader
 * epoch: its classic groups ({@link ClassicGroupManager}), its KIP-848 consumer groups ({@link ConsumerGroupManager})
 * and their offsets ({@link OffsetManager}), fed by the partition's
 * log when loaded, and the shard's periodic offset expiry. The coordinator runtime runs it
 * ({@code io.cairn.broker.coordinator}); a new leader epoch loads a new shard from the log.
 *
 * <p>Thread-safety: confined to the shard's thread (one coordinator thread at a time), the loader thread before it
 * is loaded.
 */
public final class GroupShard implements CoordinatorShard<CoordinatorRecord> {

    private static final Logger LOGGER = org.apache.logging.log4j.LogManager.getLogger(GroupShard.class);
    private static final String OFFSETS_EXPIRY = "offsets-expiry";

    private final ShardContext<CoordinatorRecord> ctx;
    private final GroupConfig config;
    private final ClassicGroupManager groups;
    private final ConsumerGroupManager consumerGroups;
    private final ShareGroupManager shareGroups;
    private final OffsetManager offsets;
    private final GroupCounters counters;

    /** A shard whose consumer groups see no topics (tests of classic groups and offsets). */
    GroupShard(ShardContext<CoordinatorRecord> ctx, GroupConfig config, GroupCounters counters) {
        this(ctx, config, ConsumerGroupConfig.defaults(), ShareGroupConfig.defaults(), counters,
            GroupShard::noTopics);
    }

    /** A shard with Kafka's default share group settings. */
    GroupShard(ShardContext<CoordinatorRecord> ctx, GroupConfig config, ConsumerGroupConfig consumerConfig,
               GroupCounters counters, Supplier<ConsumerGroupTopics> topics) {
        this(ctx, config, consumerConfig, ShareGroupConfig.defaults(), counters, topics);
    }

    /**
     * @param counters counts commits, expirations, deletions and rebalances, shared by the coordinator's shards
     * @param topics   the current topics, which consumer group subscriptions resolve against
     */
    GroupShard(ShardContext<CoordinatorRecord> ctx, GroupConfig config, ConsumerGroupConfig consumerConfig,
               ShareGroupConfig shareConfig, GroupCounters counters, Supplier<ConsumerGroupTopics> topics) {
        this.ctx = ctx;
        this.config = config;
        this.counters = counters;
        this.groups = new ClassicGroupManager(ctx, config, counters);
        this.offsets = new OffsetManager(ctx, config, counters);
        // A group id is one group's, of one type at a time: a consumer heartbeat to a classic group's id replaces an
        // empty group and upgrades one with members, and a consumer group whose last member speaking the consumer
        // protocol leaves is downgraded, as Kafka does (group.consumer.migration.policy).
        this.consumerGroups = new ConsumerGroupManager(ctx, consumerConfig,
            List.of(new UniformAssignor(), new RangeAssignor()), topics,
            new GroupMigration(groups, consumerConfig, topics, ctx::nowMs, this::isShareGroup));
        // A share group's id is not another type's: a share heartbeat to a classic or consumer group's id gets
        // GROUP_ID_NOT_FOUND, and so does a consumer heartbeat to a share group's (Kafka's rules).
        this.shareGroups = new ShareGroupManager(ctx, shareConfig, topics,
            groupId -> groups.group(groupId).isPresent() || consumerGroups.group(groupId).isPresent());
    }

    private boolean isShareGroup(String groupId) {
        return shareGroups != null && shareGroups.group(groupId).isPresent();
    }

    private static ConsumerGroupTopics noTopics() {
        return new ConsumerGroupTopics() {
            @Override
            public io.cairn.wire.protocol.Uuid topicId(String name) {
                return null;
            }

            @Override
            public String topicName(io.cairn.wire.protocol.Uuid topicId) {
                return null;
            }

            @Override
            public int numPartitions(io.cairn.wire.protocol.Uuid topicId) {
                return -1;
            }
        };
    }

    public ClassicGroupManager groups() {
        return groups;
    }

    /** The KIP-848 consumer groups of this shard. */
    public ConsumerGroupManager consumerGroups() {
        return consumerGroups;
    }

    /** The KIP-932 share groups of this shard. */
    public ShareGroupManager shareGroups() {
        return shareGroups;
    }

    public OffsetManager offsets() {
        return offsets;
    }

    // ------------------------------------------------------- the group APIs, for either type of group

    /**
     * A classic JoinGroup. To a consumer group with members, the member joins it speaking the classic protocol (a
     * mixed group, as during a rolling migration; {@link io.cairn.broker.group.consumer.ClassicProtocolMembers}); an
     * empty consumer group is deleted first and a classic group takes its place, as on Kafka.
     */
    public CompletableFuture<JoinGroupResponseData> joinGroup(ClientInfo client, JoinGroupRequestData request,
                                                              short version) {
        if (isShareGroup(request.groupId())) {
            // Kafka: a group of another type (share) answers a classic JoinGroup with INCONSISTENT_GROUP_PROTOCOL.
            return CompletableFuture.completedFuture(new JoinGroupResponseData().setMemberId("")
                .setErrorCode(Errors.INCONSISTENT_GROUP_PROTOCOL.code()));
        }
        Optional<ConsumerGroup> consumer = consumerGroups.group(request.groupId());
        if (consumer.isEmpty()) {
            return groups.join(client, request, version);
        }
        if (consumer.get().numMembers() > 0) {
            if (request.sessionTimeoutMs() < config.minSessionTimeoutMs()
                    || request.sessionTimeoutMs() > config.maxSessionTimeoutMs()) {
                // Kafka checks the classic session timeout bounds before it routes the JoinGroup to either type.
                return CompletableFuture.completedFuture(new JoinGroupResponseData().setMemberId(request.memberId())
                    .setErrorCode(Errors.INVALID_SESSION_TIMEOUT.code()));
            }
            return consumerGroups.classicMembers().join(client.clientId(), client.clientHost(), request, version);
        }
        List<CoordinatorRecord> tombstones = consumerGroups.deleteGroup(request.groupId());
        return write(tombstones).thenCompose(ignored -> groups.join(client, request, version));
    }

    /** A SyncGroup, to the group of either type. */
    public CompletableFuture<SyncGroupResponseData> syncGroup(SyncGroupRequestData request, short version) {
        return consumerGroups.group(request.groupId()).isPresent()
            ? consumerGroups.classicMembers().sync(request) : groups.sync(request, version);
    }

    /** A Heartbeat, to the group of either type. */
    public CompletableFuture<HeartbeatResponseData> heartbeat(HeartbeatRequestData request, short version) {
        return consumerGroups.group(request.groupId()).isPresent()
            ? consumerGroups.classicMembers().heartbeat(request) : groups.heartbeat(request, version);
    }

    /** A LeaveGroup, to the group of either type. */
    public CompletableFuture<LeaveGroupResponseData> leaveGroup(LeaveGroupRequestData request, short version) {
        return consumerGroups.group(request.groupId()).isPresent()
            ? consumerGroups.classicMembers().leave(request, version) : groups.leave(request, version);
    }

    /**
     * Kafka's check of an OffsetCommit of {@code version} against the group of either type: a consumer group checks
     * the member and its epoch (STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID), a classic group its generation.
     */
    public Errors validateOffsetCommit(String groupId, int generationIdOrMemberEpoch, String memberId,
                                       String groupInstanceId, short version) {
        if (isShareGroup(groupId)) {
            // Kafka's ShareGroup: "Group <id> is not a consumer group."
            return Errors.GROUP_ID_NOT_FOUND;
        }
        Optional<ConsumerGroup> consumer = consumerGroups.group(groupId);
        if (consumer.isPresent()) {
            return consumer.get().validateOffsetCommit(memberId, generationIdOrMemberEpoch, false, version);
        }
        return groups.validateOffsetCommit(groupId, generationIdOrMemberEpoch, memberId, groupInstanceId, version);
    }

    /** As {@link #validateOffsetCommit} for a TxnOffsetCommit (no version rule for consumer group members). */
    public Errors validateTxnOffsetCommit(String groupId, int generationIdOrMemberEpoch, String memberId,
                                          String groupInstanceId) {
        if (isShareGroup(groupId)) {
            // Kafka's ShareGroup: "Group <id> is not a consumer group."
            return Errors.GROUP_ID_NOT_FOUND;
        }
        Optional<ConsumerGroup> consumer = consumerGroups.group(groupId);
        if (consumer.isPresent()) {
            return consumer.get().validateOffsetCommit(memberId, generationIdOrMemberEpoch, true, (short) -1);
        }
        return groups.validateTxnOffsetCommit(groupId, generationIdOrMemberEpoch, memberId, groupInstanceId);
    }

    /**
     * Kafka's check of an OffsetFetch against the group: a consumer group member fetching (OffsetFetch v9+ names it
     * and its epoch) must be a member at that epoch; others are accepted.
     */
    public Errors validateOffsetFetch(String groupId, String memberId, int memberEpoch) {
        if (isShareGroup(groupId)) {
            // Kafka's ShareGroup: "Group <id> is not a consumer group."
            return Errors.GROUP_ID_NOT_FOUND;
        }
        Optional<ConsumerGroup> consumer = consumerGroups.group(groupId);
        if (consumer.isPresent()) {
            return consumer.get().validateOffsetFetch(memberId, memberEpoch);
        }
        return groups.validateOffsetFetch(groupId);
    }

    /** DeleteGroups: GROUP_ID_NOT_FOUND for an unknown group, NON_EMPTY_GROUP unless it is Empty. */
    public Errors validateDeleteGroup(String groupId) {
        if (isShareGroup(groupId)) {
            return shareGroups.validateDeleteGroup(groupId);
        }
        Optional<ConsumerGroup> consumer = consumerGroups.group(groupId);
        return consumer.isPresent() ? consumer.get().validateDeleteGroup() : groups.validateDeleteGroup(groupId);
    }

    /** Forgets the group (of either type) and returns the tombstones that delete it, for the caller to write. */
    public List<CoordinatorRecord> deleteGroup(String groupId) {
        if (isShareGroup(groupId)) {
            return shareGroups.deleteGroup(groupId);
        }
        return consumerGroups.group(groupId).isPresent() ? consumerGroups.deleteGroup(groupId)
            : groups.deleteGroup(groupId);
    }

    /** Whether a group of either type has this id. */
    public boolean hasGroup(String groupId) {
        return consumerGroups.group(groupId).isPresent() || groups.group(groupId).isPresent()
            || isShareGroup(groupId);
    }

    /**
     * OffsetDelete of one topic: a consumer group refuses a topic a member subscribes to (GROUP_SUBSCRIBED_TO_TOPIC);
     * a classic group applies its own rules.
     */
    public Errors validateOffsetDelete(String groupId, String topic) {
        if (isShareGroup(groupId)) {
            // Kafka's ShareGroup: "Group <id> is not a consumer group."
            return Errors.GROUP_ID_NOT_FOUND;
        }
        Optional<ConsumerGroup> consumer = consumerGroups.group(groupId);
        if (consumer.isPresent()) {
            return consumer.get().isSubscribedToTopic(topic) ? Errors.GROUP_SUBSCRIBED_TO_TOPIC : Errors.NONE;
        }
        return groups.validateOffsetDelete(groupId, topic);
    }

    /** The groups of both types as ListGroups reports them, filtered by state and type. */
    public List<ListGroupsResponseData.ListedGroup> listGroups(Set<String> states, Set<String> types) {
        List<ListGroupsResponseData.ListedGroup> listed = new ArrayList<>(groups.list(states, types));
        listed.addAll(consumerGroups.list(states, types));
        listed.addAll(shareGroups.list(states, types));
        return listed;
    }

    /**
     * The group as DescribeGroups (the classic API) reports it: a consumer group is not a classic group, which Kafka
     * answers as an unknown group (Dead; from version 6 with GROUP_ID_NOT_FOUND and its message).
     */
    public DescribeGroupsResponseData.DescribedGroup describeClassicGroup(String groupId, short version) {
        if (consumerGroups.group(groupId).isEmpty() && !isShareGroup(groupId)) {
            return groups.describe(groupId, version);
        }
        DescribeGroupsResponseData.DescribedGroup described = new DescribeGroupsResponseData.DescribedGroup()
            .setGroupId(groupId).setGroupState(ClassicGroupState.DEAD.displayName());
        if (version >= 6) {
            described.setErrorCode(Errors.GROUP_ID_NOT_FOUND.code())
                .setErrorMessage("Group " + groupId + " is not a classic group.");
        }
        return described;
    }

    /** The {@code __consumer_offsets} partition of this shard. */
    public int partitionIndex() {
        return ctx.partitionIndex();
    }

    /** Writes {@code records} to the shard's partition (see {@link ShardContext#write(List)}). */
    public CompletableFuture<Void> write(List<CoordinatorRecord> records) {
        return ctx.write(records);
    }

    @Override
    public void replay(long offset, long producerId, short producerEpoch, CoordinatorRecord record) {
        if (record.key() instanceof OffsetCommitKey) {
            offsets.replay(offset, producerId, (OffsetCommitKey) record.key(), (OffsetCommitValue) record.value());
        } else if (record.key() instanceof GroupMetadataKey) {
            groups.replay(((GroupMetadataKey) record.key()).group(), (GroupMetadataValue) record.value());
        } else if (ShareGroupRecords.isShareGroupRecord(record.keyVersion())) {
            shareGroups.replay(record);
        } else if (record.keyVersion() >= ConsumerGroupRecords.GROUP_METADATA) {
            consumerGroups.replay(record);
        }
    }

    @Override
    public void replayEndTransactionMarker(long producerId, short producerEpoch, boolean commit) {
        offsets.replayEndTransactionMarker(producerId, commit);
    }

    @Override
    public void onLoaded() {
        for (String groupId : offsets.groupIdsWithAnyOffsets()) {
            if (groups.group(groupId).isEmpty() && consumerGroups.group(groupId).isEmpty() && !isShareGroup(groupId)) {
                // Offsets without a group record belong to a "simple" group (assign + commit): Kafka recreates it
                // as an empty group when loading.
                groups.getOrCreateSimpleGroup(groupId);
            }
        }
        groups.onLoaded();
        consumerGroups.onLoaded();
        shareGroups.onLoaded();
        scheduleOffsetExpiry();
        LOGGER.info("Loaded {} classic group(s), {} consumer group(s), {} share group(s) and the offsets of {} group(s)"
            + " of __consumer_offsets-{}", groups.groupIds().size(), consumerGroups.groupIds().size(),
            shareGroups.groupIds().size(),
            offsets.groupIds().size(), ctx.partitionIndex());
    }

    @Override
    public void onUnloaded() {
        groups.unload();
        consumerGroups.unload();
        shareGroups.unload();
    }

    private void scheduleOffsetExpiry() {
        ctx.schedule(OFFSETS_EXPIRY, config.offsetsRetentionCheckIntervalMs(), () -> {
            expireOffsets();
            scheduleOffsetExpiry();
        });
    }

    /** Kafka's offset expiration task: expired offsets get tombstones, then empty groups without offsets die. */
    private void expireOffsets() {
        // A consumer group's offsets expire only while it has no member; the time it became empty is not tracked
        // yet, so the commit timestamps alone count then.
        Map<String, List<OffsetManager.TopicPartitionKey>> expired = offsets.expiredOffsets(groupId ->
            consumerGroups.group(groupId).map(g -> g.numMembers() > 0 ? null : Long.valueOf(-1L))
                .orElseGet(() -> groups.group(groupId).map(g -> g.isInState(ClassicGroupState.EMPTY)
                    ? Long.valueOf(g.stateTimestampMs()) : null).orElse(-1L)));
        deleteEmptyConsumerGroupsWithoutOffsets(expired.keySet());
        if (expired.isEmpty()) {
            return;
        }
        offsets.remove(expired, "expired").whenComplete((ignored, failure) -> {
            if (failure != null) {
                LOGGER.warn("Cannot expire offsets in __consumer_offsets-{}: {}", ctx.partitionIndex(),
                    failure.toString());
                return;
            }
            counters.offsetsExpired(expired.values().stream().mapToInt(List::size).sum());
            List<CoordinatorRecord> tombstones = new ArrayList<>();
            for (String groupId : expired.keySet()) {
                if (offsets.hasOffsets(groupId) || offsets.hasOpenTransaction(groupId)) {
                    continue;
                }
                if (consumerGroups.group(groupId).isPresent()) {
                    if (consumerGroups.group(groupId).get().validateDeleteGroup() == Errors.NONE) {
                        tombstones.addAll(consumerGroups.deleteGroup(groupId));
                    }
                } else if (groups.isEmptyGroup(groupId)) {
                    tombstones.addAll(groups.deleteGroup(groupId));
                }
            }
            if (!tombstones.isEmpty()) {
                ctx.write(tombstones).whenComplete((done, error) -> LOGGER.info(
                    "Wrote {} tombstone(s) of empty groups without offsets to __consumer_offsets-{}{}",
                    tombstones.size(), ctx.partitionIndex(), error == null ? "" : " (write failed: " + error + ")"));
            }
        });
    }

    /**
     * Kafka's group cleanup for consumer groups: an Empty consumer group without offsets (and none expiring now, whose
     * group the expiry handles once they are gone) is deleted, its tombstones written.
     */
    private void deleteEmptyConsumerGroupsWithoutOffsets(Set<String> expiring) {
        List<CoordinatorRecord> tombstones = new ArrayList<>();
        for (String groupId : consumerGroups.groupIds()) {
            if (!expiring.contains(groupId) && !offsets.hasOffsets(groupId) && !offsets.hasOpenTransaction(groupId)
                    && consumerGroups.group(groupId).map(g -> g.validateDeleteGroup() == Errors.NONE).orElse(false)) {
                tombstones.addAll(consumerGroups.deleteGroup(groupId));
            }
        }
        if (!tombstones.isEmpty()) {
            ctx.write(tombstones).whenComplete((done, error) -> LOGGER.info(
                "Removed empty consumer group(s) without offsets from __consumer_offsets-{}{}", ctx.partitionIndex(),
                error == null ? "" : " (write failed: " + error + ")"));
        }
    }

    /** Kafka's {@code onPartitionsDeleted}: every group loses its committed offsets of the deleted topics. */
    void removeOffsetsOf(Set<String> topics) {
        Map<String, List<OffsetManager.TopicPartitionKey>> gone = offsets.offsetsOfTopics(topics);
        if (!gone.isEmpty()) {
            offsets.remove(gone, "of deleted topics " + topics).whenComplete((ignored, failure) -> {
                if (failure != null) {
                    LOGGER.warn("Cannot remove the offsets of deleted topics {} from __consumer_offsets-{}: {}",
                        topics, ctx.partitionIndex(), failure.toString());
                }
            });
        }
    }
}
