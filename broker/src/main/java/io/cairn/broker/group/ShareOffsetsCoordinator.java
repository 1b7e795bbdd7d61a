package io.cairn.broker.group;

import io.cairn.broker.coordinator.CoordinatorWriteErrors;
import io.cairn.broker.group.share.ShareGroupManager;
import io.cairn.broker.group.share.ShareStateInitializer;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.TopicImage;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AlterShareGroupOffsetsRequestData;
import io.cairn.wire.message.AlterShareGroupOffsetsResponseData;
import io.cairn.wire.message.DeleteShareGroupOffsetsRequestData;
import io.cairn.wire.message.DeleteShareGroupOffsetsResponseData;
import io.cairn.wire.message.DeleteShareGroupOffsetsResponseData.DeleteShareGroupOffsetsResponseTopic;
import io.cairn.wire.message.DeleteShareGroupStateResponseData;
import io.cairn.wire.message.DescribeShareGroupOffsetsRequestData;
import io.cairn.wire.message.DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseGroup;
import io.cairn.wire.message.DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponsePartition;
import io.cairn.wire.message.DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseTopic;
import io.cairn.wire.message.InitializeShareGroupStateRequestData;
import io.cairn.wire.message.InitializeShareGroupStateResponseData;
import io.cairn.wire.message.ReadShareGroupStateSummaryRequestData;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The share group offsets admin operations (KIP-932) as Kafka 4.1's {@code GroupCoordinatorService} runs them: the
 * group's shard ({@link ShareGroupManager}) decides and records the share-partitions' states, the share coordinator
 * ({@link ShareStateInitializer}) holds their offsets.
 *
 * <ul>
 *   <li>DescribeShareGroupOffsets reads each share-partition's start offset with ReadShareGroupStateSummary: the
 *       topics asked for, or all the group's initialized share-partitions; an unknown topic, or a share-partition
 *       without state, has start offset -1.</li>
 *   <li>AlterShareGroupOffsets (an Empty share group) initializes the share-partitions at the given start offsets
 *       (InitializeShareGroupState at the group epoch); once that succeeded they are initialized.</li>
 *   <li>DeleteShareGroupOffsets (an Empty share group) deletes the initialized topics' state with
 *       DeleteShareGroupState; a deleted topic leaves the group's share-partition states.</li>
 *   <li>DeleteGroups of an Empty share group first deletes the state of all its share-partitions.</li>
 * </ul>
 *
 * Immutable, thread-safe; never blocks.
 */
public final class ShareOffsetsCoordinator {

    private final GroupCoordinator groups;
    private final Supplier<MetadataImage> image;

    public ShareOffsetsCoordinator(GroupCoordinator groups) {
        this.groups = groups;
        this.image = groups::image;
    }

    // ------------------------------------------------------------------------------------------------ describe

    /**
     * One group of DescribeShareGroupOffsets: {@code topics} null describes the group's initialized share-partitions
     * (on the group's coordinator); otherwise those asked for.
     */
    public CompletableFuture<DescribeShareGroupOffsetsResponseGroup> describe(String groupId,
            List<DescribeShareGroupOffsetsRequestData.DescribeShareGroupOffsetsRequestTopic> topics) {
        ShareStateInitializer persister = groups.shareStateInitializer();
        if (persister == null) {
            return CompletableFuture.completedFuture(describeError(groupId, Errors.COORDINATOR_NOT_AVAILABLE));
        }
        MetadataImage current = image.get();
        if (topics != null) {
            ReadShareGroupStateSummaryRequestData request = new ReadShareGroupStateSummaryRequestData()
                .setGroupId(groupId);
            Map<Uuid, String> names = new HashMap<>();
            List<DescribeShareGroupOffsetsResponseTopic> unknown = new ArrayList<>();
            for (DescribeShareGroupOffsetsRequestData.DescribeShareGroupOffsetsRequestTopic topic : topics) {
                Optional<TopicImage> known = current.topic(topic.topicName());
                if (known.isPresent()) {
                    names.put(known.get().id(), topic.topicName());
                    request.topics().add(summaryData(known.get().id(), topic.partitions()));
                } else {
                    DescribeShareGroupOffsetsResponseTopic missing = new DescribeShareGroupOffsetsResponseTopic()
                        .setTopicName(topic.topicName()).setTopicId(Uuid.ZERO);
                    topic.partitions().forEach(p -> missing.partitions().add(
                        new DescribeShareGroupOffsetsResponsePartition().setPartitionIndex(p).setStartOffset(-1L)));
                    unknown.add(missing);
                }
            }
            return summary(persister, request, names, unknown);
        }
        return call(groupId, shard -> CompletableFuture.completedFuture(
                shard.shareGroups().states(groupId).initializedPartitions()))
            .thenCompose(initialized -> {
                MetadataImage now = image.get();
                ReadShareGroupStateSummaryRequestData request = new ReadShareGroupStateSummaryRequestData()
                    .setGroupId(groupId);
                Map<Uuid, String> names = new HashMap<>();
                initialized.forEach((topicId, partitions) -> now.topic(topicId).ifPresent(t -> {
                    names.put(topicId, t.name());
                    request.topics().add(summaryData(topicId, partitions.stream().sorted().toList()));
                }));
                return summary(persister, request, names, new ArrayList<>());
            })
            .exceptionally(failure -> describeError(groupId, CoordinatorWriteErrors.operationError(failure)));
    }

    private static ReadShareGroupStateSummaryRequestData.ReadStateSummaryData summaryData(Uuid topicId,
                                                                                      List<Integer> partitions) {
        ReadShareGroupStateSummaryRequestData.ReadStateSummaryData data =
            new ReadShareGroupStateSummaryRequestData.ReadStateSummaryData().setTopicId(topicId);
        partitions.forEach(p -> data.partitions().add(
            new ReadShareGroupStateSummaryRequestData.PartitionData().setPartition(p)));
        return data;
    }

    /** Kafka's {@code readShareGroupStateSummary}: a share-partition the share coordinator errs on has offset -1. */
    private static CompletableFuture<DescribeShareGroupOffsetsResponseGroup> summary(ShareStateInitializer persister,
            ReadShareGroupStateSummaryRequestData request, Map<Uuid, String> names,
            List<DescribeShareGroupOffsetsResponseTopic> topics) {
        DescribeShareGroupOffsetsResponseGroup group = new DescribeShareGroupOffsetsResponseGroup()
            .setGroupId(request.groupId()).setTopics(topics);
        if (request.topics().isEmpty()) {
            return CompletableFuture.completedFuture(group);
        }
        return persister.readStateSummary(request).thenApply(response -> {
            response.results().forEach(t -> {
                DescribeShareGroupOffsetsResponseTopic topic = new DescribeShareGroupOffsetsResponseTopic()
                    .setTopicId(t.topicId()).setTopicName(names.get(t.topicId()));
                t.partitions().stream().sorted(Comparator.comparingInt(p -> p.partition())).forEach(p -> {
                    boolean ok = p.errorCode() == Errors.NONE.code();
                    topic.partitions().add(new DescribeShareGroupOffsetsResponsePartition()
                        .setPartitionIndex(p.partition()).setStartOffset(ok ? p.startOffset() : -1L)
                        .setLeaderEpoch(ok ? p.leaderEpoch() : 0));
                });
                topics.add(topic);
            });
            return group;
        });
    }

    private static DescribeShareGroupOffsetsResponseGroup describeError(String groupId, Errors error) {
        return new DescribeShareGroupOffsetsResponseGroup().setGroupId(groupId).setErrorCode(error.code())
            .setErrorMessage(error.message());
    }

    // --------------------------------------------------------------------------------------------------- alter

    /**
     * AlterShareGroupOffsets of the topics that exist (the handler answers the others): the shard's answer, with the
     * share coordinator's error for each share-partition it could not initialize.
     */
    public CompletableFuture<AlterShareGroupOffsetsResponseData> alter(String groupId,
                                                                     AlterShareGroupOffsetsRequestData request) {
        ShareStateInitializer persister = groups.shareStateInitializer();
        if (persister == null) {
            return CompletableFuture.completedFuture(alterError(Errors.COORDINATOR_NOT_AVAILABLE, null));
        }
        if (request.topics().isEmpty()) {
            // Kafka 4.1.1 answers no topic (all refused by the handler, or none asked for) before looking at the group
            return CompletableFuture.completedFuture(new AlterShareGroupOffsetsResponseData());
        }
        return call(groupId, shard -> shard.shareGroups().alterOffsets(groupId, request))
            .thenCompose(result -> result.initialize().isEmpty()
                ? CompletableFuture.completedFuture(result.response())
                : persister.initializeState(result.initialize().get())
                    .thenApply(initialized -> initialized(groupId, result.initialize().get(), result.response(),
                        initialized)))
            .exceptionally(failure -> alterError(CoordinatorWriteErrors.operationError(failure), null));
    }

    /**
     * Kafka's {@code persisterInitialize} for AlterShareGroupOffsets: when every share-partition was initialized they
     * become initialized at the group (not waited for); otherwise the answer carries each one's error and they stay
     * initializing.
     */
    private AlterShareGroupOffsetsResponseData initialized(String groupId, InitializeShareGroupStateRequestData sent,
                                                           AlterShareGroupOffsetsResponseData response,
                                                           InitializeShareGroupStateResponseData result) {
        Map<Uuid, Map<Integer, InitializeShareGroupStateResponseData.PartitionResult>> errors = new HashMap<>();
        result.results().forEach(t -> t.partitions().stream().filter(p -> p.errorCode() != Errors.NONE.code())
            .forEach(p -> errors.computeIfAbsent(t.topicId(), id -> new HashMap<>()).put(p.partition(), p)));
        if (errors.isEmpty()) {
            Map<Uuid, Set<Integer>> partitions = new HashMap<>();
            sent.topics().forEach(t -> t.partitions().forEach(p ->
                partitions.computeIfAbsent(t.topicId(), id -> new HashSet<>()).add(p.partition())));
            try {
                call(groupId, shard -> shard.shareGroups().initialized(groupId, partitions));
            } catch (RuntimeException e) {
                // The shard moved or stops: its next coordinator initializes the partitions again when subscribed.
            }
            return response;
        }
        response.responses().forEach(topic -> topic.partitions().forEach(p -> {
            InitializeShareGroupStateResponseData.PartitionResult error = errors
                .getOrDefault(topic.topicId(), Map.of()).get(p.partitionIndex());
            if (p.errorCode() == Errors.NONE.code() && error != null) {
                p.setErrorCode(error.errorCode()).setErrorMessage(error.errorMessage());
            }
        }));
        return response;
    }

    private static AlterShareGroupOffsetsResponseData alterError(Errors error, String message) {
        return new AlterShareGroupOffsetsResponseData().setErrorCode(error.code())
            .setErrorMessage(message == null ? error.message() : message);
    }

    // -------------------------------------------------------------------------------------------------- delete

    /**
     * DeleteShareGroupOffsets of {@code request}'s topics: the shard moves the initialized ones to deleting, the
     * share coordinator deletes their state, then the shard forgets the topics it deleted; each topic's outcome.
     */
    public CompletableFuture<DeleteShareGroupOffsetsResponseData> deleteOffsets(String groupId,
            DeleteShareGroupOffsetsRequestData request) {
        ShareStateInitializer persister = groups.shareStateInitializer();
        if (persister == null) {
            return CompletableFuture.completedFuture(deleteError(Errors.COORDINATOR_NOT_AVAILABLE, null));
        }
        return call(groupId, shard -> shard.shareGroups().startDeleteOffsets(groupId, request))
            .thenCompose(start -> {
                if (start.error() != Errors.NONE) {
                    return CompletableFuture.completedFuture(deleteError(start.error(), start.message()));
                }
                List<DeleteShareGroupOffsetsResponseTopic> errors = new ArrayList<>(start.errors());
                if (start.delete().isEmpty()) {
                    return CompletableFuture.completedFuture(new DeleteShareGroupOffsetsResponseData()
                        .setResponses(errors));
                }
                return persister.deleteState(start.delete().get())
                    .thenCompose(result -> deleted(groupId, result, errors));
            })
            .exceptionally(failure -> deleteError(CoordinatorWriteErrors.operationError(failure), null));
    }

    private CompletableFuture<DeleteShareGroupOffsetsResponseData> deleted(String groupId,
            DeleteShareGroupStateResponseData result, List<DeleteShareGroupOffsetsResponseTopic> errors) {
        MetadataImage current = image.get();
        Map<Uuid, String> deleted = new LinkedHashMap<>();
        for (DeleteShareGroupStateResponseData.DeleteStateResult topic : result.results()) {
            String name = current.topic(topic.topicId()).map(TopicImage::name).orElse(null);
            Optional<DeleteShareGroupStateResponseData.PartitionResult> failed = topic.partitions().stream()
                .filter(p -> p.errorCode() != Errors.NONE.code()).findAny();
            if (failed.isPresent()) {
                Errors error = Errors.forCode(failed.get().errorCode());
                errors.add(new DeleteShareGroupOffsetsResponseTopic().setTopicId(topic.topicId()).setTopicName(name)
                    .setErrorCode(error.code()).setErrorMessage(error.message()));
            } else {
                deleted.put(topic.topicId(), name);
            }
        }
        if (deleted.isEmpty()) {
            return CompletableFuture.completedFuture(new DeleteShareGroupOffsetsResponseData().setResponses(errors));
        }
        return call(groupId, shard -> shard.shareGroups().completeDeleteOffsets(groupId, deleted.keySet()))
            .thenApply(ignored -> {
                List<DeleteShareGroupOffsetsResponseTopic> topics = new ArrayList<>();
                deleted.forEach((id, name) -> topics.add(new DeleteShareGroupOffsetsResponseTopic().setTopicId(id)
                    .setTopicName(name).setErrorCode(Errors.NONE.code()).setErrorMessage(null)));
                topics.addAll(errors);
                return new DeleteShareGroupOffsetsResponseData().setResponses(topics);
            });
    }

    private static DeleteShareGroupOffsetsResponseData deleteError(Errors error, String message) {
        return new DeleteShareGroupOffsetsResponseData().setErrorCode(error.code())
            .setErrorMessage(message == null ? error.message() : message);
    }

    /**
     * DeleteGroups' share group half (Kafka's {@code deleteShareGroups}): when {@code groupId} is an Empty share group
     * the state of all its share-partitions is deleted at the share coordinator. Completes with NONE (or
     * GROUP_ID_NOT_FOUND: not a share group) when the ordinary deletion may follow, else the error to answer
     * (NON_EMPTY_GROUP, or the share coordinator's).
     */
    public CompletableFuture<Errors> deleteGroupState(String groupId) {
        return call(groupId, shard -> shard.shareGroups().startDeleteGroup(groupId)).thenCompose(start -> {
            if (start.error() != Errors.NONE || start.delete().isEmpty()) {
                return CompletableFuture.completedFuture(start.error());
            }
            ShareStateInitializer persister = groups.shareStateInitializer();
            if (persister == null) {
                return CompletableFuture.completedFuture(Errors.COORDINATOR_NOT_AVAILABLE);
            }
            return persister.deleteState(start.delete().get()).thenApply(result -> result.results().stream()
                .flatMap(t -> t.partitions().stream()).filter(p -> p.errorCode() != Errors.NONE.code())
                .map(p -> Errors.forCode(p.errorCode())).findFirst().orElse(Errors.NONE));
        });
    }

    // ------------------------------------------------------------------------------------------------- helpers

    private <T> CompletableFuture<T> call(String groupId, Function<GroupShard, CompletableFuture<T>> op) {
        try {
            return groups.call(groupId, op);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
