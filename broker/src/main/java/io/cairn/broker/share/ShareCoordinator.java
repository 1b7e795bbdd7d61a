package io.cairn.broker.share;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.coordinator.CoordinatorRuntime;
import io.cairn.broker.coordinator.CoordinatorRuntimeConfig;
import io.cairn.broker.coordinator.CoordinatorWriteErrors;
import io.cairn.broker.purgatory.PartitionPurgatory;
import io.cairn.broker.purgatory.SystemTimer;
import io.cairn.isr.ReplicaManager;
import io.cairn.log.Time;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.TopicImage;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.DeleteShareGroupStateRequestData;
import io.cairn.wire.message.DeleteShareGroupStateResponseData;
import io.cairn.wire.message.InitializeShareGroupStateRequestData;
import io.cairn.wire.message.InitializeShareGroupStateResponseData;
import io.cairn.wire.message.ReadShareGroupStateRequestData;
import io.cairn.wire.message.ReadShareGroupStateResponseData;
import io.cairn.wire.message.ReadShareGroupStateSummaryRequestData;
import io.cairn.wire.message.ReadShareGroupStateSummaryResponseData;
import io.cairn.wire.message.WriteShareGroupStateRequestData;
import io.cairn.wire.message.WriteShareGroupStateResponseData;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * The share coordinator (Kafka's {@code ShareCoordinatorService}): the share kind of the {@link CoordinatorRuntime},
 * one {@link ShareShard} per {@code __share_group_state} partition this broker leads. It keeps the persisted state
 * of share-partitions (KIP-932) for their leaders, the share-partition leaders of a share group's topics, through
 * the five state RPCs (Initialize, Read, Write, Delete ShareGroupState and ReadShareGroupStateSummary).
 *
 * <p>A request is split per share-partition: each goes to the shard of its coordinator key's partition
 * ({@link SharePartitionKey#coordinatorPartition}) and the answers are gathered by topic, in request order. As
 * Kafka's service does, a request without topics, with a topic without partitions or with an empty group id is
 * answered with no results at all; a share-partition whose shard fails gets Kafka's error mapping
 * (NOT_COORDINATOR when this broker does not lead the partition, COORDINATOR_LOAD_IN_PROGRESS while it loads,
 * COORDINATOR_NOT_AVAILABLE while stopping or when a write timed out) and the message
 * "Unable to &lt;operation&gt;: &lt;cause&gt;".
 *
 * <p>Thread-safety: thread-safe. Shards run on the runtime's threads ({@code cairn-share-coordinator-N}).
 */
public final class ShareCoordinator implements AutoCloseable {

    /** Kafka's name of the internal topic of share-group state. */
    public static final String TOPIC = "__share_group_state";

    private final MetadataNode metadata;
    private final ShareCoordinatorConfig config;
    private final CoordinatorRuntime<ShareShard, CoordinatorRecord> runtime;

    public ShareCoordinator(ReplicaManager replicaManager, MetadataNode metadata, PartitionPurgatory purgatory,
                            ShareCoordinatorConfig config, Time time) {
        this.metadata = metadata;
        this.config = config;
        CoordinatorRuntimeConfig<ShareShard, CoordinatorRecord> kind = new CoordinatorRuntimeConfig<>(
            "share-coordinator", TOPIC, config.runtime(), ShareRecords.SERDE,
            ctx -> new ShareShard(ctx, metadata::currentImage, config.updatesPerSnapshot()),
            config.loadBufferSize());
        this.runtime = new CoordinatorRuntime<>(kind, replicaManager, purgatory,
            new SystemTimer("share-coordinator"), time);
    }

    /** Follows the leadership of {@code __share_group_state} partitions, loading those this broker leads already. */
    public void start() {
        runtime.start();
    }

    /** The settings. */
    public ShareCoordinatorConfig config() {
        return config;
    }

    /** The topic's image, if it exists. */
    public Optional<TopicImage> topic() {
        return metadata.currentImage().topic(TOPIC);
    }

    /** The partition count: the topic's, or share.coordinator.state.topic.num.partitions before it exists. */
    public int partitionCount() {
        return topic().map(t -> t.partitions().size()).orElse(config.numPartitions());
    }

    /** The {@code __share_group_state} partition of a share-partition. */
    public int partitionFor(SharePartitionKey key) {
        return key.coordinatorPartition(partitionCount());
    }

    // ---- the state RPCs

    /** InitializeShareGroupState v0. */
    public CompletableFuture<InitializeShareGroupStateResponseData> initializeState(
            InitializeShareGroupStateRequestData request) {
        if (malformed(request.groupId(), request.topics(),
                InitializeShareGroupStateRequestData.InitializeStateData::partitions)) {
            return CompletableFuture.completedFuture(new InitializeShareGroupStateResponseData());
        }
        Map<Uuid, List<CompletableFuture<InitializeShareGroupStateResponseData.PartitionResult>>> futures =
            new LinkedHashMap<>();
        for (InitializeShareGroupStateRequestData.InitializeStateData topic : request.topics()) {
            for (InitializeShareGroupStateRequestData.PartitionData p : topic.partitions()) {
                futures.computeIfAbsent(topic.topicId(), t -> new ArrayList<>()).add(call(
                    new SharePartitionKey(request.groupId(), topic.topicId(), p.partition()),
                    shard -> shard.initialize(request.groupId(), topic.topicId(), p),
                    (error, message) -> new InitializeShareGroupStateResponseData.PartitionResult()
                        .setPartition(p.partition()).setErrorCode(error.code())
                        .setErrorMessage("Unable to initialize share group state: " + message)));
            }
        }
        return gather(futures, (topicId, partitions) -> new InitializeShareGroupStateResponseData
            .InitializeStateResult().setTopicId(topicId).setPartitions(partitions))
            .thenApply(results -> new InitializeShareGroupStateResponseData().setResults(results));
    }

    /** ReadShareGroupState v0. */
    public CompletableFuture<ReadShareGroupStateResponseData> readState(ReadShareGroupStateRequestData request) {
        if (malformed(request.groupId(), request.topics(),
                ReadShareGroupStateRequestData.ReadStateData::partitions)) {
            return CompletableFuture.completedFuture(new ReadShareGroupStateResponseData());
        }
        Map<Uuid, List<CompletableFuture<ReadShareGroupStateResponseData.PartitionResult>>> futures =
            new LinkedHashMap<>();
        for (ReadShareGroupStateRequestData.ReadStateData topic : request.topics()) {
            for (ReadShareGroupStateRequestData.PartitionData p : topic.partitions()) {
                futures.computeIfAbsent(topic.topicId(), t -> new ArrayList<>()).add(call(
                    new SharePartitionKey(request.groupId(), topic.topicId(), p.partition()),
                    shard -> shard.read(request.groupId(), topic.topicId(), p.partition(), p.leaderEpoch()),
                    (error, message) -> new ReadShareGroupStateResponseData.PartitionResult()
                        .setPartition(p.partition()).setErrorCode(error.code())
                        .setErrorMessage("Unable to read share group state: " + message)));
            }
        }
        return gather(futures, (topicId, partitions) -> new ReadShareGroupStateResponseData.ReadStateResult()
            .setTopicId(topicId).setPartitions(partitions))
            .thenApply(results -> new ReadShareGroupStateResponseData().setResults(results));
    }

    /** WriteShareGroupState v0. */
    public CompletableFuture<WriteShareGroupStateResponseData> writeState(WriteShareGroupStateRequestData request) {
        if (malformed(request.groupId(), request.topics(),
                WriteShareGroupStateRequestData.WriteStateData::partitions)) {
            return CompletableFuture.completedFuture(new WriteShareGroupStateResponseData());
        }
        Map<Uuid, List<CompletableFuture<WriteShareGroupStateResponseData.PartitionResult>>> futures =
            new LinkedHashMap<>();
        for (WriteShareGroupStateRequestData.WriteStateData topic : request.topics()) {
            for (WriteShareGroupStateRequestData.PartitionData p : topic.partitions()) {
                futures.computeIfAbsent(topic.topicId(), t -> new ArrayList<>()).add(call(
                    new SharePartitionKey(request.groupId(), topic.topicId(), p.partition()),
                    shard -> shard.write(request.groupId(), topic.topicId(), p),
                    (error, message) -> new WriteShareGroupStateResponseData.PartitionResult()
                        .setPartition(p.partition()).setErrorCode(error.code())
                        .setErrorMessage("Unable to write share group state: " + message)));
            }
        }
        return gather(futures, (topicId, partitions) -> new WriteShareGroupStateResponseData.WriteStateResult()
            .setTopicId(topicId).setPartitions(partitions))
            .thenApply(results -> new WriteShareGroupStateResponseData().setResults(results));
    }

    /** DeleteShareGroupState v0. */
    public CompletableFuture<DeleteShareGroupStateResponseData> deleteState(
            DeleteShareGroupStateRequestData request) {
        if (malformed(request.groupId(), request.topics(),
                DeleteShareGroupStateRequestData.DeleteStateData::partitions)) {
            return CompletableFuture.completedFuture(new DeleteShareGroupStateResponseData());
        }
        Map<Uuid, List<CompletableFuture<DeleteShareGroupStateResponseData.PartitionResult>>> futures =
            new LinkedHashMap<>();
        for (DeleteShareGroupStateRequestData.DeleteStateData topic : request.topics()) {
            for (DeleteShareGroupStateRequestData.PartitionData p : topic.partitions()) {
                futures.computeIfAbsent(topic.topicId(), t -> new ArrayList<>()).add(call(
                    new SharePartitionKey(request.groupId(), topic.topicId(), p.partition()),
                    shard -> shard.delete(request.groupId(), topic.topicId(), p.partition()),
                    (error, message) -> new DeleteShareGroupStateResponseData.PartitionResult()
                        .setPartition(p.partition()).setErrorCode(error.code())
                        .setErrorMessage("Unable to delete share group state: " + message)));
            }
        }
        return gather(futures, (topicId, partitions) -> new DeleteShareGroupStateResponseData.DeleteStateResult()
            .setTopicId(topicId).setPartitions(partitions))
            .thenApply(results -> new DeleteShareGroupStateResponseData().setResults(results));
    }

    /** ReadShareGroupStateSummary v0. */
    public CompletableFuture<ReadShareGroupStateSummaryResponseData> readStateSummary(
            ReadShareGroupStateSummaryRequestData request) {
        if (malformed(request.groupId(), request.topics(),
                ReadShareGroupStateSummaryRequestData.ReadStateSummaryData::partitions)) {
            return CompletableFuture.completedFuture(new ReadShareGroupStateSummaryResponseData());
        }
        Map<Uuid, List<CompletableFuture<ReadShareGroupStateSummaryResponseData.PartitionResult>>> futures =
            new LinkedHashMap<>();
        for (ReadShareGroupStateSummaryRequestData.ReadStateSummaryData topic : request.topics()) {
            for (ReadShareGroupStateSummaryRequestData.PartitionData p : topic.partitions()) {
                futures.computeIfAbsent(topic.topicId(), t -> new ArrayList<>()).add(call(
                    new SharePartitionKey(request.groupId(), topic.topicId(), p.partition()),
                    shard -> shard.readSummary(request.groupId(), topic.topicId(), p.partition()),
                    (error, message) -> new ReadShareGroupStateSummaryResponseData.PartitionResult()
                        .setPartition(p.partition()).setErrorCode(error.code())
                        .setErrorMessage("Unable to read share group state summary: " + message)));
            }
        }
        return gather(futures, (topicId, partitions) -> new ReadShareGroupStateSummaryResponseData
            .ReadStateSummaryResult().setTopicId(topicId).setPartitions(partitions))
            .thenApply(results -> new ReadShareGroupStateSummaryResponseData().setResults(results));
    }

    // ---- helpers

    /** Kafka's service answers these with an empty response: no topics, a topic without partitions, no group id. */
    private static <T> boolean malformed(String groupId, List<T> topics, Function<T, List<?>> partitions) {
        if (topics == null || topics.isEmpty()) {
            return true;
        }
        for (T topic : topics) {
            List<?> p = partitions.apply(topic);
            if (p == null || p.isEmpty()) {
                return true;
            }
        }
        return groupId == null || groupId.isEmpty();
    }

    /** Runs one share-partition's operation on its shard, turning a failure into its error result. */
    private <T> CompletableFuture<T> call(SharePartitionKey key, Function<ShareShard, CompletableFuture<T>> op,
                                          BiFunction<Errors, String, T> onError) {
        return runtime.call(partitionFor(key), op).exceptionally(failure -> {
            Throwable cause = unwrap(failure);
            return onError.apply(CoordinatorWriteErrors.operationError(cause), cause.getMessage());
        });
    }

    private static Throwable unwrap(Throwable failure) {
        Throwable current = failure;
        while ((current instanceof CompletionException || current instanceof ExecutionException)
                && current.getCause() != null) {
            current = current.getCause();
        }
        return current;
    }

    /** The per-topic results, in request order, once every share-partition is answered. */
    private static <P, R> CompletableFuture<List<R>> gather(Map<Uuid, List<CompletableFuture<P>>> futures,
                                                           BiFunction<Uuid, List<P>, R> topicResult) {
        List<CompletableFuture<P>> all = new ArrayList<>();
        futures.values().forEach(all::addAll);
        return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).thenApply(ignored -> {
            List<R> results = new ArrayList<>(futures.size());
            futures.forEach((topicId, list) -> {
                List<P> partitions = new ArrayList<>(list.size());
                list.forEach(f -> partitions.add(f.join()));
                results.add(topicResult.apply(topicId, partitions));
            });
            return results;
        });
    }

    /** Unloads every shard and stops the runtime's threads. */
    @Override
    public void close() {
        runtime.close();
    }
}
