package io.cairn.broker.group;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.coordinator.CoordinatorShard;
import io.cairn.broker.coordinator.ShardContext;
import io.cairn.broker.group.record.GroupMetadataKey;
import io.cairn.broker.group.record.GroupMetadataValue;
import io.cairn.broker.group.record.OffsetCommitKey;
import io.cairn.broker.group.record.OffsetCommitValue;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.logging.log4j.Logger;

/**
 * The group coordinator state kept in one {@code __consumer_offsets} partition this broker leads, in one leader
 * epoch: its groups ({@link ClassicGroupManager}) and their offsets ({@link OffsetManager}), fed by the partition's
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
    private final OffsetManager offsets;
    private final GroupCounters counters;

    /** @param counters counts commits, expirations, deletions and rebalances, shared by the coordinator's shards */
    GroupShard(ShardContext<CoordinatorRecord> ctx, GroupConfig config, GroupCounters counters) {
        this.ctx = ctx;
        this.config = config;
        this.counters = counters;
        this.groups = new ClassicGroupManager(ctx, config, counters);
        this.offsets = new OffsetManager(ctx, config, counters);
    }

    public ClassicGroupManager groups() {
        return groups;
    }

    public OffsetManager offsets() {
        return offsets;
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
        }
    }

    @Override
    public void replayEndTransactionMarker(long producerId, short producerEpoch, boolean commit) {
        offsets.replayEndTransactionMarker(producerId, commit);
    }

    @Override
    public void onLoaded() {
        for (String groupId : offsets.groupIdsWithAnyOffsets()) {
            if (groups.group(groupId).isEmpty()) {
                // Offsets without a group record belong to a "simple" group (assign + commit): Kafka recreates it
                // as an empty group when loading.
                groups.getOrCreateSimpleGroup(groupId);
            }
        }
        groups.onLoaded();
        scheduleOffsetExpiry();
        LOGGER.info("Loaded {} group(s) and the offsets of {} group(s) of __consumer_offsets-{}",
            groups.groupIds().size(), offsets.groupIds().size(), ctx.partitionIndex());
    }

    @Override
    public void onUnloaded() {
        groups.unload();
    }

    private void scheduleOffsetExpiry() {
        ctx.schedule(OFFSETS_EXPIRY, config.offsetsRetentionCheckIntervalMs(), () -> {
            expireOffsets();
            scheduleOffsetExpiry();
        });
    }

    /** Kafka's offset expiration task: expired offsets get tombstones, then empty groups without offsets die. */
    private void expireOffsets() {
        Map<String, List<OffsetManager.TopicPartitionKey>> expired = offsets.expiredOffsets(groupId ->
            groups.group(groupId).map(g -> g.isInState(ClassicGroupState.EMPTY)
                ? Long.valueOf(g.stateTimestampMs()) : null).orElse(-1L));
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
                if (!offsets.hasOffsets(groupId) && !offsets.hasOpenTransaction(groupId)
                        && groups.isEmptyGroup(groupId)) {
                    tombstones.addAll(groups.deleteGroup(groupId));
                }
            }
            if (!tombstones.isEmpty()) {
                ctx.write(tombstones).whenComplete((done, error) -> LOGGER.info(
                    "Removed {} empty group(s) without offsets from __consumer_offsets-{}{}", tombstones.size(),
                    ctx.partitionIndex(), error == null ? "" : " (write failed: " + error + ")"));
            }
        });
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
