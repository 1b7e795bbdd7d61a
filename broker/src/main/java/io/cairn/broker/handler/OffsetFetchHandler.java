package io.cairn.broker.handler;

import io.cairn.broker.group.GroupCoordinator;
import io.cairn.broker.group.OffsetManager.CommittedOffset;
import io.cairn.broker.group.OffsetManager.TopicPartitionKey;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.OffsetFetchRequestData;
import io.cairn.wire.message.OffsetFetchRequestData.OffsetFetchRequestGroup;
import io.cairn.wire.message.OffsetFetchRequestData.OffsetFetchRequestTopic;
import io.cairn.wire.message.OffsetFetchRequestData.OffsetFetchRequestTopics;
import io.cairn.wire.message.OffsetFetchResponseData;
import io.cairn.wire.message.OffsetFetchResponseData.OffsetFetchResponseGroup;
import io.cairn.wire.message.OffsetFetchResponseData.OffsetFetchResponsePartition;
import io.cairn.wire.message.OffsetFetchResponseData.OffsetFetchResponsePartitions;
import io.cairn.wire.message.OffsetFetchResponseData.OffsetFetchResponseTopic;
import io.cairn.wire.message.OffsetFetchResponseData.OffsetFetchResponseTopics;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Predicate;

/**
 * OffsetFetch v1-v9 (Kafka 4.1.1 serves these; v10 is unstable): the committed offsets of one group (v1-v7) or of
 * several (v8+), each read on its group's coordinator shard. A partition without a committed offset answers offset
 * -1, leader epoch -1 and metadata "" without an error, as does an unknown group; null topics (v2+) ask for every
 * committed offset of the group. A group-level failure (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, ...) is
 * the top-level error from v2 and each partition's error in v1, as Kafka answers. With {@code require_stable} (v7+),
 * a partition an open transaction holds an offset for answers UNSTABLE_OFFSET_COMMIT (the consumer retries). A member
 * of a consumer group names itself and its epoch (v9+): an unknown member is UNKNOWN_MEMBER_ID, another epoch
 * STALE_MEMBER_EPOCH, for the group.
 * Immutable, thread-safe.
 */
public final class OffsetFetchHandler implements ApiHandler<OffsetFetchRequestData, OffsetFetchResponseData> {

    private final GroupCoordinator coordinator;

    public OffsetFetchHandler(GroupCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.OFFSET_FETCH;
    }

    @Override
    public short minVersion() {
        return 1;
    }

    @Override
    public short maxVersion() {
        return 9;
    }

    /**
     * One group's answer: the topics with their partitions, or the group's error; {@code unstable} are the
     * partitions a require_stable fetch gets UNSTABLE_OFFSET_COMMIT for (an open transaction holds an offset).
     */
    private record GroupOffsets(Errors error, Map<String, Map<Integer, CommittedOffset>> topics,
                                Set<TopicPartitionKey> unstable, Set<String> unauthorized) {
        GroupOffsets(Errors error) {
            this(error, Map.of(), Set.of(), Set.of());
        }

        Errors errorOf(String topic, int partition) {
            if (unauthorized.contains(topic)) {
                return Errors.TOPIC_AUTHORIZATION_FAILED;
            }
            return unstable.contains(new TopicPartitionKey(topic, partition)) ? Errors.UNSTABLE_OFFSET_COMMIT
                : Errors.NONE;
        }

        /**
         * Kafka's topic filter: topics the caller may not DESCRIBE are left out of an all-topics answer, and a
         * requested one answers TOPIC_AUTHORIZATION_FAILED on its partitions.
         */
        GroupOffsets authorizedFor(Predicate<String> describable, boolean allTopics) {
            if (error != Errors.NONE) {
                return this;
            }
            Map<String, Map<Integer, CommittedOffset>> kept = new LinkedHashMap<>();
            Set<String> refused = new HashSet<>();
            topics.forEach((topic, partitions) -> {
                if (describable.test(topic)) {
                    kept.put(topic, partitions);
                } else if (!allTopics) {
                    kept.put(topic, partitions);
                    refused.add(topic);
                }
            });
            return new GroupOffsets(error, kept, unstable, refused);
        }
    }

    @Override
    public CompletionStage<OffsetFetchResponseData> handle(RequestContext ctx, OffsetFetchRequestData request) {
        short version = ctx.apiVersion();
        if (version >= 8) {
            List<CompletableFuture<OffsetFetchResponseGroup>> groups = new ArrayList<>();
            for (OffsetFetchRequestGroup group : request.groups()) {
                Map<String, List<Integer>> topics = group.topics() == null ? null : new LinkedHashMap<>();
                if (group.topics() != null) {
                    for (OffsetFetchRequestTopics t : group.topics()) {
                        topics.computeIfAbsent(t.name(), k -> new ArrayList<>()).addAll(t.partitionIndexes());
                    }
                }
                groups.add(fetch(ctx, group.groupId(), group.memberId(), group.memberEpoch(), topics,
                    request.requireStable()).thenApply(r -> groupResponse(group.groupId(), r)));
            }
            return CompletableFuture.allOf(groups.toArray(CompletableFuture[]::new)).thenApply(ignored -> {
                OffsetFetchResponseData response = new OffsetFetchResponseData().setThrottleTimeMs(0);
                groups.forEach(g -> response.groups().add(g.join()));
                return response;
            });
        }
        Map<String, List<Integer>> topics = request.topics() == null ? null : new LinkedHashMap<>();
        if (request.topics() != null) {
            for (OffsetFetchRequestTopic t : request.topics()) {
                topics.computeIfAbsent(t.name(), k -> new ArrayList<>()).addAll(t.partitionIndexes());
            }
        }
        return fetch(ctx, request.groupId(), null, -1, topics, request.requireStable())
            .thenApply(r -> singleGroupResponse(r, version, topics));
    }

    /**
     * Never fails: a group-level failure becomes the answer's error. As Kafka's, DESCRIBE on the group comes first
     * (else GROUP_AUTHORIZATION_FAILED), and DESCRIBE on each topic decides what the caller sees of it.
     */
    private CompletableFuture<GroupOffsets> fetch(RequestContext ctx, String groupId, String memberId,
                                                  int memberEpoch, Map<String, List<Integer>> requested,
                                                  boolean requireStable) {
        if (!ctx.authorize(AclOperation.DESCRIBE, AclResourceType.GROUP, groupId == null ? "" : groupId)) {
            return CompletableFuture.completedFuture(new GroupOffsets(Errors.GROUP_AUTHORIZATION_FAILED));
        }
        Map<String, Boolean> describable = new HashMap<>();
        return fetch(groupId, memberId, memberEpoch, requested, requireStable).thenApply(offsets ->
            offsets.authorizedFor(topic -> describable.computeIfAbsent(topic,
                t -> ctx.authorize(AclOperation.DESCRIBE, AclResourceType.TOPIC, t)), requested == null));
    }

    private CompletableFuture<GroupOffsets> fetch(String groupId, String memberId, int memberEpoch,
                                                  Map<String, List<Integer>> requested, boolean requireStable) {
        if (groupId == null || groupId.isEmpty()) {
            return CompletableFuture.completedFuture(new GroupOffsets(Errors.INVALID_GROUP_ID));
        }
        CompletableFuture<GroupOffsets> answer;
        try {
            answer = coordinator.call(groupId, shard -> {
                Errors error = shard.validateOffsetFetch(groupId, memberId, memberEpoch);
                if (error != Errors.NONE) {
                    return CompletableFuture.completedFuture(new GroupOffsets(error));
                }
                Map<String, Map<Integer, CommittedOffset>> selected = select(shard.offsets().offsets(groupId),
                    requested);
                Set<TopicPartitionKey> unstable = new HashSet<>();
                if (requireStable) {
                    selected.forEach((topic, partitions) -> partitions.keySet().stream()
                        .filter(p -> shard.offsets().hasPendingTransactionalOffset(groupId, topic, p))
                        .forEach(p -> unstable.add(new TopicPartitionKey(topic, p))));
                }
                return CompletableFuture.completedFuture(new GroupOffsets(Errors.NONE, selected, unstable,
                    Set.of()));
            });
        } catch (RuntimeException e) {
            answer = CompletableFuture.failedFuture(e);
        }
        return answer.exceptionally(failure -> new GroupOffsets(Errors.forException(failure)));
    }

    private static Map<String, Map<Integer, CommittedOffset>> select(Map<TopicPartitionKey, CommittedOffset> offsets,
                                                                     Map<String, List<Integer>> requested) {
        Map<String, Map<Integer, CommittedOffset>> topics = new LinkedHashMap<>();
        if (requested == null) {
            offsets.forEach((key, offset) -> topics.computeIfAbsent(key.topic(), t -> new TreeMap<>())
                .put(key.partition(), offset));
            return topics;
        }
        requested.forEach((topic, partitions) -> {
            Map<Integer, CommittedOffset> result = topics.computeIfAbsent(topic, t -> new LinkedHashMap<>());
            for (int partition : partitions) {
                result.put(partition, offsets.get(new TopicPartitionKey(topic, partition)));
            }
        });
        return topics;
    }

    private static OffsetFetchResponseGroup groupResponse(String groupId, GroupOffsets offsets) {
        OffsetFetchResponseGroup group = new OffsetFetchResponseGroup().setGroupId(groupId)
            .setErrorCode(offsets.error().code());
        offsets.topics().forEach((topic, partitions) -> {
            OffsetFetchResponseTopics t = new OffsetFetchResponseTopics().setName(topic);
            partitions.forEach((index, committed) -> {
                Errors error = offsets.errorOf(topic, index);
                CommittedOffset offset = error == Errors.NONE ? committed : null;
                t.partitions().add(new OffsetFetchResponsePartitions()
                    .setPartitionIndex(index).setCommittedOffset(offset == null ? -1L : offset.offset())
                    .setCommittedLeaderEpoch(offset == null ? -1 : offset.leaderEpoch())
                    .setMetadata(offset == null ? "" : offset.metadata()).setErrorCode(error.code()));
            });
            group.topics().add(t);
        });
        return group;
    }

    private static OffsetFetchResponseData singleGroupResponse(GroupOffsets offsets, short version,
                                                               Map<String, List<Integer>> requested) {
        OffsetFetchResponseData response = new OffsetFetchResponseData().setThrottleTimeMs(0);
        Map<String, Map<Integer, CommittedOffset>> topics = offsets.topics();
        Errors error = offsets.error();
        if (error != Errors.NONE && version < 2 && requested != null) {
            // v1 has no top-level error: every requested partition carries it (Kafka's getErrorResponse).
            requested.forEach((topic, partitions) -> {
                OffsetFetchResponseTopic t = new OffsetFetchResponseTopic().setName(topic);
                partitions.forEach(p -> t.partitions().add(partition(p, null).setErrorCode(error.code())));
                response.topics().add(t);
            });
            return response;
        }
        response.setErrorCode(error.code());
        topics.forEach((topic, partitions) -> {
            OffsetFetchResponseTopic t = new OffsetFetchResponseTopic().setName(topic);
            partitions.forEach((index, offset) -> {
                Errors unstable = offsets.errorOf(topic, index);
                t.partitions().add(unstable == Errors.NONE ? partition(index, offset)
                    : partition(index, null).setErrorCode(unstable.code()));
            });
            response.topics().add(t);
        });
        return response;
    }

    private static OffsetFetchResponsePartition partition(int index, CommittedOffset offset) {
        return new OffsetFetchResponsePartition().setPartitionIndex(index)
            .setCommittedOffset(offset == null ? -1L : offset.offset())
            .setCommittedLeaderEpoch(offset == null ? -1 : offset.leaderEpoch())
            .setMetadata(offset == null ? "" : offset.metadata()).setErrorCode(Errors.NONE.code());
    }

    @Override
    public OffsetFetchResponseData errorResponse(RequestContext ctx, OffsetFetchRequestData request, Errors error) {
        OffsetFetchResponseData response = new OffsetFetchResponseData().setThrottleTimeMs(0);
        if (ctx.apiVersion() >= 8) {
            request.groups().forEach(g -> response.groups().add(new OffsetFetchResponseGroup()
                .setGroupId(g.groupId()).setErrorCode(error.code())));
            return response;
        }
        Map<String, List<Integer>> topics = new LinkedHashMap<>();
        if (request.topics() != null) {
            request.topics().forEach(t -> topics.put(t.name(), t.partitionIndexes()));
        }
        return singleGroupResponse(new GroupOffsets(error), ctx.apiVersion(), topics);
    }
}
