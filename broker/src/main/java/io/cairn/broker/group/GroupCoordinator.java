package io.cairn.broker.group;

import io.cairn.broker.purgatory.PartitionPurgatory;
import io.cairn.isr.Partition;
import io.cairn.isr.PartitionListener;
import io.cairn.isr.ReplicaManager;
import io.cairn.log.Time;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.MetadataListener;
import io.cairn.metadata.image.TopicImage;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.CoordinatorLoadInProgressException;
import io.cairn.wire.error.CoordinatorNotAvailableException;
import io.cairn.wire.error.NotCoordinatorException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.logging.log4j.Logger;

/**
 * The group coordinator runtime (Kafka's {@code CoordinatorRuntime}, reduced to one thread): one {@link GroupShard}
 * per {@code __consumer_offsets} partition this broker leads, loaded by replaying the partition's log when the
 * leadership starts and dropped when it ends; requests for a group run on the shard of the group's partition.
 *
 * <p>Thread-safety: thread-safe. Every shard operation, timer and write completion runs on the single
 * {@code cairn-group-coordinator} thread; loading reads the log on the {@code cairn-group-loader} thread before the
 * shard serves anything.
 */
public final class GroupCoordinator implements AutoCloseable {

    /** Kafka's name of the internal topic of group metadata and offsets. */
    public static final String TOPIC = "__consumer_offsets";

    private static final Logger LOGGER = org.apache.logging.log4j.LogManager.getLogger(GroupCoordinator.class);

    private final ReplicaManager replicaManager;
    private final PartitionPurgatory purgatory;
    private final MetadataNode metadata;
    private final GroupConfig config;
    private final int configuredPartitions;
    private final Time time;
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "cairn-group-coordinator");
        t.setDaemon(true);
        return t;
    });
    private final ExecutorService loader = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "cairn-group-loader");
        t.setDaemon(true);
        return t;
    });
    /** Shards by partition index; coordinator thread only. */
    private final Map<Integer, GroupShard> shards = new HashMap<>();
    private final MetadataListener deletions = update -> {
        if (!update.changes().deletedTopics().isEmpty()) {
            Set<String> topics = new HashSet<>();
            update.changes().deletedTopics().forEach(t -> topics.add(t.name()));
            try {
                execute(() -> removeOffsetsOf(topics));
            } catch (CoordinatorNotAvailableException e) {
                // Stopping: the offsets go at the next start's retention check.
            }
        }
    };
    private volatile boolean closed;

    /**
     * @param configuredPartitions offsets.topic.num.partitions: the partition count until the topic exists
     * @param purgatory            where a shard's writes wait for the high watermark
     */
    public GroupCoordinator(ReplicaManager replicaManager, MetadataNode metadata, GroupConfig config,
                            int configuredPartitions, Time time, PartitionPurgatory purgatory) {
        this.replicaManager = replicaManager;
        this.purgatory = purgatory;
        this.metadata = metadata;
        this.config = config;
        this.configuredPartitions = configuredPartitions;
        this.time = time;
    }

    /**
     * Follows the leadership of {@code __consumer_offsets} partitions, loading those this broker leads already, and
     * topic deletions, whose committed offsets it removes.
     */
    public void start() {
        metadata.subscribe(deletions);
        replicaManager.addListener(new PartitionListener() {
            @Override
            public void onHighWatermarkAdvanced(Partition partition) {
            }

            @Override
            public void onLeadershipChanged(Partition partition) {
                if (TOPIC.equals(partition.topic())) {
                    execute(() -> refresh(partition.partitionIndex()));
                }
            }
        });
        for (Partition partition : replicaManager.allPartitions()) {
            if (TOPIC.equals(partition.topic())) {
                execute(() -> refresh(partition.partitionIndex()));
            }
        }
    }

    /** The partition count of {@code __consumer_offsets}: the topic's, or offsets.topic.num.partitions before it. */
    public int partitionCount() {
        return metadata.currentImage().topic(TOPIC).map(t -> t.partitions().size()).orElse(configuredPartitions);
    }

    /** The {@code __consumer_offsets} partition of a group (Kafka's {@code Utils.abs(hashCode) % partitions}). */
    public int partitionFor(String groupId) {
        return partitionFor(groupId, partitionCount());
    }

    /** Kafka's partitioning of group ids over {@code partitions}. */
    public static int partitionFor(String groupId, int partitions) {
        int hash = groupId.hashCode();
        int abs = hash == Integer.MIN_VALUE ? 0 : Math.abs(hash);
        return abs % partitions;
    }

    /** The topic's image, if it exists. */
    public Optional<TopicImage> topic() {
        return metadata.currentImage().topic(TOPIC);
    }

    /**
     * Runs {@code op} on the shard of {@code groupId}'s partition. Fails with NOT_COORDINATOR when this broker does
     * not lead it, COORDINATOR_LOAD_IN_PROGRESS while it loads, COORDINATOR_NOT_AVAILABLE once stopping.
     */
    public <T> CompletableFuture<T> call(String groupId, Function<GroupShard, CompletableFuture<T>> op) {
        CompletableFuture<T> result = new CompletableFuture<>();
        int index = partitionFor(groupId);
        execute(() -> {
            try {
                op.apply(activeShard(index)).whenComplete((value, failure) -> {
                    if (failure != null) {
                        result.completeExceptionally(failure);
                    } else {
                        result.complete(value);
                    }
                });
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
            }
        });
        return result;
    }

    /**
     * Runs {@code op} on every active shard (ListGroups); fails with COORDINATOR_LOAD_IN_PROGRESS while any shard
     * loads, as Kafka's ListGroups answers.
     */
    public <T> CompletableFuture<List<T>> callAll(Function<GroupShard, T> op) {
        CompletableFuture<List<T>> result = new CompletableFuture<>();
        execute(() -> {
            try {
                List<T> values = new ArrayList<>();
                for (GroupShard shard : shards.values()) {
                    if (shard.state() == GroupShard.State.LOADING) {
                        throw new CoordinatorLoadInProgressException("__consumer_offsets-"
                            + shard.partitionIndex() + " is loading");
                    }
                    values.add(op.apply(shard));
                }
                result.complete(values);
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
            }
        });
        return result;
    }

    private void execute(Runnable task) {
        if (closed) {
            throw new CoordinatorNotAvailableException("The group coordinator is shutting down");
        }
        try {
            thread.execute(() -> {
                try {
                    task.run();
                } catch (RuntimeException e) {
                    LOGGER.error("Group coordinator task failed", e);
                }
            });
        } catch (RejectedExecutionException e) {
            throw new CoordinatorNotAvailableException("The group coordinator is shutting down");
        }
    }

    private GroupShard activeShard(int index) {
        GroupShard shard = shards.get(index);
        if (shard == null || !isCurrent(shard)) {
            refresh(index);
            shard = shards.get(index);
        }
        if (shard == null) {
            throw new NotCoordinatorException("This broker does not lead __consumer_offsets-" + index);
        }
        if (shard.state() == GroupShard.State.LOADING) {
            throw new CoordinatorLoadInProgressException("The groups of __consumer_offsets-" + index
                + " are being loaded");
        }
        return shard;
    }

    private boolean isCurrent(GroupShard shard) {
        Partition partition = shard.partition();
        return partition.isLeader() && partition.leaderEpoch() == shard.leaderEpoch()
            && replicaManager.partition(partition.topicPartition()).orElse(null) == partition;
    }

    /** Loads, reloads or unloads the shard of partition {@code index} to match this broker's leadership. */
    private void refresh(int index) {
        if (closed) {
            return;
        }
        Partition partition = replicaManager.partition(new TopicPartition(TOPIC, index)).orElse(null);
        GroupShard shard = shards.get(index);
        boolean leads = partition != null && partition.isLeader();
        if (shard != null && (!leads || !isCurrent(shard))) {
            shards.remove(index);
            shard.close();
            LOGGER.info("Unloaded the groups of {}-{} (leader epoch {})", TOPIC, index, shard.leaderEpoch());
            shard = null;
        }
        if (leads && shard == null) {
            GroupShard loading = new GroupShard(partition, partition.leaderEpoch(), thread, time, config,
                purgatory);
            shards.put(index, loading);
            loader.execute(() -> load(loading));
        }
    }

    private void load(GroupShard shard) {
        Partition partition = shard.partition();
        long start = time.milliseconds();
        CoordinatorLoader.LoadSummary summary;
        try {
            summary = CoordinatorLoader.load(partition.log(), partition.logEndOffset(), shard::replay);
        } catch (Exception e) {
            LOGGER.error("Cannot load the groups of {}: the partition stays unavailable as coordinator until its "
                + "next leadership", partition.topicPartition(), e);
            execute(() -> {
                if (shards.get(partition.partitionIndex()) == shard) {
                    shards.remove(partition.partitionIndex());
                }
                shard.close();
            });
            return;
        }
        CoordinatorLoader.LoadSummary loaded = summary;
        execute(() -> {
            if (shards.get(partition.partitionIndex()) != shard || shard.state() != GroupShard.State.LOADING) {
                return;
            }
            for (String groupId : shard.offsets().groupIds()) {
                if (shard.groups().group(groupId).isEmpty()) {
                    // Offsets without a group record belong to a "simple" group (assign + commit): Kafka
                    // recreates it as an empty group when loading.
                    shard.groups().getOrCreateSimpleGroup(groupId);
                }
            }
            shard.activate();
            scheduleOffsetExpiry(shard);
            LOGGER.info("Loaded {} group(s) and the offsets of {} group(s) from {} record(s) of {} (leader epoch {}) "
                + "in {} ms", shard.groups().groupIds().size(), shard.offsets().groupIds().size(), loaded.records(),
                partition.topicPartition(), shard.leaderEpoch(), time.milliseconds() - start);
        });
    }

    private void scheduleOffsetExpiry(GroupShard shard) {
        shard.schedule("offsets-expiry", config.offsetsRetentionCheckIntervalMs(), () -> {
            expireOffsets(shard);
            scheduleOffsetExpiry(shard);
        });
    }

    /** Kafka's offset expiration task: expired offsets get tombstones, then empty groups without offsets die. */
    private void expireOffsets(GroupShard shard) {
        ClassicGroupManager groups = shard.groups();
        Map<String, List<OffsetManager.TopicPartitionKey>> expired = shard.offsets().expiredOffsets(groupId -> {
            return groups.group(groupId).map(g -> g.isInState(ClassicGroupState.EMPTY)
                ? Long.valueOf(g.stateTimestampMs()) : null).orElse(-1L);
        });
        if (expired.isEmpty()) {
            return;
        }
        shard.offsets().remove(expired, "expired").whenComplete((ignored, failure) -> {
            if (failure != null) {
                LOGGER.warn("Cannot expire offsets in {}-{}: {}", TOPIC, shard.partitionIndex(), failure.toString());
                return;
            }
            List<CoordinatorRecord> tombstones = new ArrayList<>();
            for (String groupId : expired.keySet()) {
                if (!shard.offsets().hasOffsets(groupId) && groups.isEmptyGroup(groupId)) {
                    tombstones.addAll(groups.deleteGroup(groupId));
                }
            }
            if (!tombstones.isEmpty()) {
                shard.write(tombstones).whenComplete((done, error) -> LOGGER.info(
                    "Removed {} empty group(s) without offsets from {}-{}{}", tombstones.size(), TOPIC,
                    shard.partitionIndex(), error == null ? "" : " (write failed: " + error + ")"));
            }
        });
    }

    /** Kafka's {@code onPartitionsDeleted}: every group loses its committed offsets of the deleted topics. */
    private void removeOffsetsOf(Set<String> topics) {
        for (GroupShard shard : shards.values()) {
            if (shard.state() != GroupShard.State.ACTIVE) {
                continue;
            }
            Map<String, List<OffsetManager.TopicPartitionKey>> gone = shard.offsets().offsetsOfTopics(topics);
            if (!gone.isEmpty()) {
                shard.offsets().remove(gone, "of deleted topics " + topics).whenComplete((ignored, failure) -> {
                    if (failure != null) {
                        LOGGER.warn("Cannot remove the offsets of deleted topics {} from {}-{}: {}", topics, TOPIC,
                            shard.partitionIndex(), failure.toString());
                    }
                });
            }
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        metadata.unsubscribe(deletions);
        try {
            thread.submit(() -> {
                shards.values().forEach(GroupShard::close);
                shards.clear();
            }).get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            LOGGER.warn("Group coordinator shards did not close cleanly: {}", e.toString());
        }
        closed = true;
        loader.shutdownNow();
        thread.shutdownNow();
    }
}
