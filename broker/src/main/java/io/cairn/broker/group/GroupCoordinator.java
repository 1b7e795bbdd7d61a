package io.cairn.broker.group;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.coordinator.CoordinatorRuntime;
import io.cairn.broker.coordinator.CoordinatorRuntimeConfig;
import io.cairn.broker.coordinator.CoordinatorRuntimeSettings;
import io.cairn.broker.group.consumer.ConsumerGroupConfig;
import io.cairn.broker.group.consumer.ConsumerGroupTopics;
import io.cairn.broker.group.share.ShareGroupConfig;
import io.cairn.broker.group.share.ShareGroupManager;
import io.cairn.broker.group.share.ShareStateInitializer;
import io.cairn.broker.purgatory.PartitionPurgatory;
import io.cairn.broker.purgatory.SystemTimer;
import io.cairn.isr.ReplicaManager;
import io.cairn.log.Time;
import io.cairn.log.producer.VerificationGuard;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.MetadataListener;
import io.cairn.metadata.image.MetadataUpdate;
import io.cairn.metadata.image.TopicImage;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.InitializeShareGroupStateRequestData;
import io.cairn.wire.message.ShareGroupHeartbeatRequestData;
import io.cairn.wire.message.ShareGroupHeartbeatResponseData;
import io.cairn.wire.protocol.Uuid;
import java.util.HashMap;
import java.util.Map;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.LongConsumer;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The group coordinator (Kafka's {@code GroupCoordinatorService}): a {@link CoordinatorRuntime} over
 * {@code __consumer_offsets} whose shards are {@link GroupShard}s. It routes a group's requests to the shard of the
 * group's partition, removes the offsets of deleted topics, tells consumer groups when topics are created (their
 * regular expressions may match more), and completes the transactions whose offsets a shard
 * holds (the transaction markers of WriteTxnMarkers).
 *
 * <p>Thread-safety: thread-safe; shard operations run on the runtime's {@code cairn-group-coordinator-N} threads,
 * one at a time per shard.
 */
public final class GroupCoordinator implements AutoCloseable {

    /** Kafka's name of the internal topic of group metadata and offsets. */
    public static final String TOPIC = "__consumer_offsets";

    private static final Logger LOGGER = LogManager.getLogger(GroupCoordinator.class);

    private final MetadataNode metadata;
    private final int configuredPartitions;
    private final CoordinatorRuntime<GroupShard, CoordinatorRecord> runtime;
    private final MetadataListener deletions = this::onMetadataUpdate;
    private final GroupCounters counters = new GroupCounters();
    /**
     * The metadata offset of the latest image that created a topic (from the start, that of the first image): a
     * consumer group's regular expressions resolved before it are resolved again. Written by the metadata listener,
     * read by the coordinator threads.
     */
    private volatile long lastTopicCreationVersion = -1L;
    /** Where share groups initialize their share-partitions' state (null until the share coordinator is up). */
    private volatile ShareStateInitializer shareStateInitializer;

    /**
     * @param settings             group.coordinator.threads, group.coordinator.append.linger.ms and
     *                             offsets.commit.timeout.ms
     * @param configuredPartitions offsets.topic.num.partitions: the partition count until the topic exists
     * @param purgatory            where a shard's writes wait for the high watermark
     */
    public GroupCoordinator(ReplicaManager replicaManager, MetadataNode metadata, GroupConfig config,
                            CoordinatorRuntimeSettings settings, int configuredPartitions, Time time,
                            PartitionPurgatory purgatory) {
        this(replicaManager, metadata, config, ConsumerGroupConfig.defaults(), settings, configuredPartitions, time,
            purgatory);
    }

    /** As above, with the KIP-848 consumer groups' settings ({@code group.consumer.*}). */
    public GroupCoordinator(ReplicaManager replicaManager, MetadataNode metadata, GroupConfig config,
                            ConsumerGroupConfig consumerConfig, CoordinatorRuntimeSettings settings,
                            int configuredPartitions, Time time, PartitionPurgatory purgatory) {
        this(replicaManager, metadata, config, consumerConfig, ShareGroupConfig.defaults(), settings,
            configuredPartitions, time, purgatory);
    }

    /** As above, with the share groups' settings ({@code group.share.*}). */
    public GroupCoordinator(ReplicaManager replicaManager, MetadataNode metadata, GroupConfig config,
                            ConsumerGroupConfig consumerConfig, ShareGroupConfig shareConfig,
                            CoordinatorRuntimeSettings settings, int configuredPartitions, Time time,
                            PartitionPurgatory purgatory) {
        this.metadata = metadata;
        this.configuredPartitions = configuredPartitions;
        CoordinatorRuntimeConfig<GroupShard, CoordinatorRecord> kind = new CoordinatorRuntimeConfig<>(
            "group-coordinator", TOPIC, settings, GroupRecordSerde.SERDE,
            ctx -> new GroupShard(ctx, config, consumerConfig, shareConfig, counters, this::topics));
        this.runtime = new CoordinatorRuntime<>(kind, replicaManager, purgatory,
            new SystemTimer("group-coordinator"), time);
    }

    /**
     * Follows the leadership of {@code __consumer_offsets} partitions, loading those this broker leads already, and
     * topic deletions, whose committed offsets it removes.
     */
    public void start() {
        lastTopicCreationVersion = metadata.currentImage().offset();
        metadata.subscribe(deletions);
        runtime.start();
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

    /** The topics of the current metadata image, as consumer group subscriptions see them. */
    private ConsumerGroupTopics topics() {
        MetadataImage image = metadata.currentImage();
        long lastTopicCreation = lastTopicCreationVersion;
        return new ConsumerGroupTopics() {
            @Override
            public Uuid topicId(String name) {
                return image.topic(name).map(TopicImage::id).orElse(null);
            }

            @Override
            public String topicName(Uuid topicId) {
                return image.topic(topicId).map(TopicImage::name).orElse(null);
            }

            @Override
            public int numPartitions(Uuid topicId) {
                return image.topic(topicId).map(t -> t.partitions().size()).orElse(-1);
            }

            @Override
            public Collection<String> topicNames() {
                return image.topicIds().keySet();
            }

            @Override
            public Map<String, String> groupConfigs(String groupId) {
                return image.configs(new ConfigResource(ConfigResource.GROUP, groupId));
            }

            @Override
            public long version() {
                return image.offset();
            }

            @Override
            public long lastTopicCreationVersion() {
                return lastTopicCreation;
            }
        };
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
        return runtime.call(partitionFor(groupId), op);
    }

    /**
     * Starts verifying a transactional offset commit of {@code producerId} for {@code groupId} on the group's
     * {@code __consumer_offsets} partition ({@link CoordinatorRuntime#startTransactionVerification}).
     */
    public VerificationGuard startTransactionVerification(String groupId, long producerId, short producerEpoch,
                                                          boolean supportsEpochBump) {
        return runtime.startTransactionVerification(partitionFor(groupId), producerId, producerEpoch,
            supportsEpochBump);
    }

    /** Share groups initialize their share-partitions' state through {@code initializer} from now on; closed here. */
    public void useShareStateInitializer(ShareStateInitializer initializer) {
        this.shareStateInitializer = initializer;
    }

    /** Where share groups reach their share-partitions' state (null until the share coordinator is up). */
    ShareStateInitializer shareStateInitializer() {
        return shareStateInitializer;
    }

    /** The broker's current metadata image. */
    MetadataImage image() {
        return metadata.currentImage();
    }

    /**
     * A ShareGroupHeartbeat, on the group's shard. Once its records are written and the answer is out, the
     * share-partitions it started initializing are sent to the share coordinator (as Kafka's
     * {@code GroupCoordinatorService.persisterInitialize}, asynchronously to the heartbeat); their outcome is written
     * back to the group, so a later heartbeat assigns them (or retries them).
     */
    public CompletableFuture<ShareGroupHeartbeatResponseData> shareGroupHeartbeat(String clientId, String clientHost,
            ShareGroupHeartbeatRequestData request) {
        Optional<ShareGroupHeartbeatResponseData> invalid = ShareGroupManager.invalid(request);
        if (invalid.isPresent()) {
            return CompletableFuture.completedFuture(invalid.get());
        }
        return call(request.groupId(), shard -> shard.shareGroups().heartbeat(clientId, clientHost, request))
            .thenApply(result -> {
                result.initialize().ifPresent(this::initializeShareState);
                return result.response();
            });
    }

    private void initializeShareState(InitializeShareGroupStateRequestData request) {
        ShareStateInitializer initializer = shareStateInitializer;
        Map<Uuid, Set<Integer>> partitions = new HashMap<>();
        request.topics().forEach(t -> t.partitions().forEach(p ->
            partitions.computeIfAbsent(t.topicId(), id -> new HashSet<>()).add(p.partition())));
        CompletableFuture<Boolean> outcome = initializer == null ? CompletableFuture.completedFuture(false)
            : initializer.initialize(request);
        outcome.exceptionally(failure -> false).thenAccept(initialized -> {
            try {
                call(request.groupId(), shard -> initialized
                    ? shard.shareGroups().initialized(request.groupId(), partitions)
                    : shard.shareGroups().initializeFailed(request.groupId(), partitions));
            } catch (RuntimeException e) {
                // The shard moved or is stopping: the group's next coordinator retries the initialization.
            }
        });
    }

    /** Tells {@code listener} the milliseconds of every {@code __consumer_offsets} partition load (metrics). */
    public void onPartitionLoaded(LongConsumer listener) {
        runtime.onPartitionLoaded(listener);
    }

    /** The coordinator's cumulative counts (Kafka's group-coordinator-metrics); any thread. */
    public GroupCounters counters() {
        return counters;
    }

    /**
     * Runs {@code op} on every active shard (ListGroups); fails with COORDINATOR_LOAD_IN_PROGRESS while any shard
     * loads, as Kafka's ListGroups answers.
     */
    public <T> CompletableFuture<List<T>> callAll(Function<GroupShard, T> op) {
        return runtime.callAll(op);
    }

    /**
     * Ends a transaction in {@code __consumer_offsets} partition {@code partition} (Kafka's
     * {@code GroupCoordinatorService.completeTransaction}, called for the partition's WriteTxnMarkers entry): appends
     * the COMMIT or ABORT marker of {@code producerId} after the shard's earlier writes and, once it is committed,
     * makes the producer's pending transactional offsets visible (COMMIT) or drops them (ABORT). Fails with
     * COORDINATOR_NOT_AVAILABLE when stopping, NOT_COORDINATOR when this broker does not lead the partition,
     * COORDINATOR_LOAD_IN_PROGRESS while it loads, and with the append's error otherwise (mapped as every coordinator
     * write: NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE; INVALID_PRODUCER_EPOCH for an older epoch than the log's).
     */
    public CompletableFuture<Void> completeTransaction(int partition, long producerId, short producerEpoch,
                                                      int coordinatorEpoch, boolean commit) {
        return runtime.completeTransaction(partition, producerId, producerEpoch, coordinatorEpoch, commit);
    }

    private void onMetadataUpdate(MetadataUpdate update) {
        if (!update.changes().createdTopics().isEmpty()) {
            lastTopicCreationVersion = update.image().offset();
        }
        if (!update.changes().deletedTopics().isEmpty()) {
            Set<String> topics = new HashSet<>();
            update.changes().deletedTopics().forEach(t -> topics.add(t.name()));
            // When stopping, the shards are gone: the offsets go at the next start's retention check.
            runtime.forEachActive(shard -> shard.removeOffsetsOf(topics));
            ShareStateInitializer persister = shareStateInitializer;
            if (persister != null) {
                Map<Uuid, String> deleted = new HashMap<>();
                update.changes().deletedTopics().forEach(t -> deleted.put(t.id(), t.name()));
                runtime.forEachActive(shard -> cleanUpShareState(shard, deleted, persister));
            }
        }
    }

    /**
     * Kafka's {@code maybeCleanupShareGroupState}, on the shard's thread: each share group of {@code shard} with state
     * of a deleted topic moves those share-partitions to deleting, the share coordinator deletes their state, then
     * the topics the share coordinator deleted leave the group's states. A failure is logged; the topic stays
     * deleting (and its state goes with the group).
     */
    private void cleanUpShareState(GroupShard shard, Map<Uuid, String> deleted, ShareStateInitializer persister) {
        for (String groupId : shard.shareGroups().groupsWithStateOf(deleted.keySet())) {
            shard.shareGroups().startTopicsDeleted(groupId, deleted).thenCompose(request -> request.isEmpty()
                    ? CompletableFuture.<Void>completedFuture(null)
                    : persister.deleteState(request.get()).thenCompose(result -> {
                        Set<Uuid> done = new HashSet<>();
                        result.results().stream().filter(t -> t.partitions().stream()
                                .allMatch(p -> p.errorCode() == Errors.NONE.code()))
                            .forEach(t -> done.add(t.topicId()));
                        return call(groupId, s -> s.shareGroups().completeDeleteOffsets(groupId, done));
                    }))
                .whenComplete((ignored, failure) -> {
                    if (failure != null) {
                        LOGGER.warn("[GroupId {}] Cannot delete the share state of deleted topics {}: {}", groupId,
                            deleted.values(), failure.toString());
                    } else {
                        LOGGER.info("[GroupId {}] Deleted the share state of deleted topics {}", groupId,
                            deleted.values());
                    }
                });
        }
    }

    @Override
    public void close() {
        metadata.unsubscribe(deletions);
        runtime.close();
        ShareStateInitializer initializer = shareStateInitializer;
        if (initializer != null) {
            initializer.close();
        }
    }
}
