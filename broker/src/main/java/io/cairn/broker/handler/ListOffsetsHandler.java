package io.cairn.broker.handler;

import io.cairn.isr.FetchIsolation;
import io.cairn.isr.Partition;
import io.cairn.isr.ReplicaManager;
import io.cairn.log.TimestampAndOffset;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ListOffsetsRequestData;
import io.cairn.wire.message.ListOffsetsRequestData.ListOffsetsPartition;
import io.cairn.wire.message.ListOffsetsRequestData.ListOffsetsTopic;
import io.cairn.wire.message.ListOffsetsResponseData;
import io.cairn.wire.message.ListOffsetsResponseData.ListOffsetsPartitionResponse;
import io.cairn.wire.message.ListOffsetsResponseData.ListOffsetsTopicResponse;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * ListOffsets v1-v10 (every version Kafka 4.1.1 serves), as Kafka's {@code ReplicaManager.fetchOffset}: per
 * partition the earliest (-2), latest (-1), max-timestamp (-3, v7+), earliest-local (-4, v8+) or latest-tiered
 * (-5, v9+; offset -1 without tiered storage) offset, or the first offset whose record timestamp is at or after a
 * timestamp, within what the requester may see: the high watermark for read_uncommitted consumers, the last stable
 * offset for read_committed ones, the log end offset for replicas. A special timestamp newer than the request's
 * version, or an unknown one, is UNSUPPORTED_VERSION; a partition named twice is INVALID_REQUEST (one answer);
 * {@code current_leader_epoch} (v4+) gives FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH; an isolation level other
 * than 0 or 1 fails the whole request with UNKNOWN_SERVER_ERROR (Kafka's parse failure); an unknown partition is
 * UNKNOWN_TOPIC_OR_PARTITION and a partition this broker does not lead NOT_LEADER_OR_FOLLOWER (Kafka's debugging
 * replica id -2 may read a follower). {@code timeout_ms} (v10) only bounds remote-storage reads, which Cairn has
 * none of.
 *
 * <p>Thread-safe. Called on a request-handler thread ({@link #runsOn()}): the max-timestamp and timestamp searches
 * read record batches and the last stable offset takes the partition's lock, neither of which an event loop may do.
 */
public final class ListOffsetsHandler implements ApiHandler<ListOffsetsRequestData, ListOffsetsResponseData> {

    private static final Logger LOGGER = LogManager.getLogger(ListOffsetsHandler.class);
    /** Kafka's {@code ListOffsetsRequest.CONSUMER_REPLICA_ID}. */
    static final int CONSUMER_REPLICA_ID = -1;
    /** Kafka's {@code ListOffsetsRequest.DEBUGGING_REPLICA_ID}: reads any replica, without a visibility bound. */
    static final int DEBUGGING_REPLICA_ID = -2;

    private final ReplicaManager replicaManager;

    public ListOffsetsHandler(ReplicaManager replicaManager) {
        this.replicaManager = replicaManager;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.LIST_OFFSETS;
    }

    @Override
    public short minVersion() {
        return 1;
    }

    @Override
    public short maxVersion() {
        return 10;
    }

    /** The first version that may ask for a special (negative) timestamp; absent = never valid. */
    static Optional<Short> minVersionOf(long timestamp) {
        if (timestamp == TimestampAndOffset.EARLIEST_TIMESTAMP || timestamp == TimestampAndOffset.LATEST_TIMESTAMP) {
            return Optional.of((short) 1);
        }
        if (timestamp == TimestampAndOffset.MAX_TIMESTAMP) {
            return Optional.of((short) 7);
        }
        if (timestamp == TimestampAndOffset.EARLIEST_LOCAL_TIMESTAMP) {
            return Optional.of((short) 8);
        }
        if (timestamp == Partition.LATEST_TIERED_TIMESTAMP) {
            return Optional.of((short) 9);
        }
        return Optional.empty();
    }

    @Override
    public CompletionStage<ListOffsetsResponseData> handle(RequestContext ctx, ListOffsetsRequestData request) {
        byte isolationLevel = request.isolationLevel();
        if (isolationLevel != 0 && isolationLevel != 1 && !request.topics().isEmpty()) {
            // Kafka's IsolationLevel.forId throws for any other id and the whole request fails with that exception
            return CompletableFuture.completedFuture(errorResponse(ctx, request, Errors.UNKNOWN_SERVER_ERROR));
        }
        return CompletableFuture.completedFuture(answer(ctx, ctx.apiVersion(), request));
    }

    private ListOffsetsResponseData answer(RequestContext ctx, short version, ListOffsetsRequestData request) {
        // Kafka's partitionSeqByAuthorized: a topic the caller may not DESCRIBE answers TOPIC_AUTHORIZATION_FAILED on
        // every partition, before any other check.
        Map<String, Boolean> describable = new HashMap<>();
        Set<TopicPartition> seen = new HashSet<>();
        Set<TopicPartition> duplicates = new HashSet<>();
        for (ListOffsetsTopic topic : request.topics()) {
            for (ListOffsetsPartition p : topic.partitions()) {
                TopicPartition tp = new TopicPartition(topic.name(), p.partitionIndex());
                if (!seen.add(tp)) {
                    duplicates.add(tp);
                }
            }
        }
        Map<String, Map<Integer, ListOffsetsPartitionResponse>> byTopic = new LinkedHashMap<>();
        for (ListOffsetsTopic topic : request.topics()) {
            Map<Integer, ListOffsetsPartitionResponse> answers =
                    byTopic.computeIfAbsent(topic.name(), k -> new LinkedHashMap<>());
            for (ListOffsetsPartition p : topic.partitions()) {
                if (answers.containsKey(p.partitionIndex())) {
                    continue;
                }
                TopicPartition tp = new TopicPartition(topic.name(), p.partitionIndex());
                ListOffsetsPartitionResponse answer = !describable.computeIfAbsent(topic.name(),
                        name -> ctx.authorize(AclOperation.DESCRIBE, AclResourceType.TOPIC, name))
                        ? errorPartition(p.partitionIndex(), Errors.TOPIC_AUTHORIZATION_FAILED)
                        : duplicates.contains(tp)
                        ? errorPartition(p.partitionIndex(), Errors.INVALID_REQUEST)
                        : partition(version, request, tp, p);
                answers.put(p.partitionIndex(), answer);
            }
        }
        ListOffsetsResponseData response = new ListOffsetsResponseData().setThrottleTimeMs(0);
        byTopic.forEach((name, answers) -> response.topics().add(new ListOffsetsTopicResponse().setName(name)
                .setPartitions(new ArrayList<>(answers.values()))));
        return response;
    }

    private ListOffsetsPartitionResponse partition(short version, ListOffsetsRequestData request,
                                                   TopicPartition tp, ListOffsetsPartition p) {
        long timestamp = p.timestamp();
        if (timestamp < 0 && minVersionOf(timestamp).map(min -> version < min).orElse(true)) {
            return errorPartition(p.partitionIndex(), Errors.UNSUPPORTED_VERSION);
        }
        int replicaId = request.replicaId();
        FetchIsolation isolation = replicaId == CONSUMER_REPLICA_ID
                ? FetchIsolation.ofConsumer(request.isolationLevel()) : null;
        try {
            Partition partition = replicaManager.partition(tp)
                    .orElseGet(() -> replicaManager.leaderPartition(tp));
            Optional<TimestampAndOffset> found = partition.fetchOffsetForTimestamp(timestamp, isolation,
                    p.currentLeaderEpoch(), replicaId != DEBUGGING_REPLICA_ID);
            if (found.isEmpty()) {
                return errorPartition(p.partitionIndex(), Errors.NONE);
            }
            TimestampAndOffset t = found.get();
            // leader_epoch is v4+ and not ignorable: older versions keep the default, as Kafka writes them
            return new ListOffsetsPartitionResponse().setPartitionIndex(p.partitionIndex())
                    .setErrorCode(Errors.NONE.code()).setTimestamp(t.timestamp()).setOffset(t.offset())
                    .setLeaderEpoch(version >= 4 ? t.leaderEpoch() : -1);
        } catch (RuntimeException e) {
            Errors error = Errors.forException(e);
            if (error == Errors.UNKNOWN_SERVER_ERROR) {
                LOGGER.error("Error while responding to ListOffsets for {}", tp, e);
            } else if (LOGGER.isDebugEnabled()) {
                LOGGER.debug("ListOffsets for {} failed: {}", tp, e.getMessage());
            }
            if (error == Errors.OFFSET_NOT_AVAILABLE && version < 5) {
                error = Errors.LEADER_NOT_AVAILABLE;
            }
            return errorPartition(p.partitionIndex(), error);
        }
    }

    private static ListOffsetsPartitionResponse errorPartition(int index, Errors error) {
        return new ListOffsetsPartitionResponse().setPartitionIndex(index).setErrorCode(error.code())
                .setTimestamp(-1L).setOffset(-1L).setLeaderEpoch(-1);
    }

    @Override
    public ListOffsetsResponseData errorResponse(RequestContext ctx, ListOffsetsRequestData request, Errors error) {
        ListOffsetsResponseData response = new ListOffsetsResponseData().setThrottleTimeMs(0);
        for (ListOffsetsTopic topic : request.topics()) {
            List<ListOffsetsPartitionResponse> partitions = new ArrayList<>();
            topic.partitions().forEach(p -> partitions.add(errorPartition(p.partitionIndex(), error)));
            response.topics().add(new ListOffsetsTopicResponse().setName(topic.name()).setPartitions(partitions));
        }
        return response;
    }
}
