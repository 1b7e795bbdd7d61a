package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;

import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.controller.TopicNames;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicImage;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.DescribeTopicPartitionsRequestData;
import io.cairn.wire.message.DescribeTopicPartitionsResponseData;
import io.cairn.wire.message.DescribeTopicPartitionsResponseData.Cursor;
import io.cairn.wire.message.DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponsePartition;
import io.cairn.wire.message.DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponseTopic;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.CompletionStage;

/**
 * DescribeTopicPartitions v0 (KIP-966; what {@code kafka-topics --describe} and the 4.x admin client use), as
 * Kafka's {@code DescribeTopicPartitionsRequestHandler}: the requested topics (all when none are named) in name
 * order from the cursor on, at most {@code min(responsePartitionLimit, 2000)} partitions per response, and a next
 * cursor where the limit cut the listing. Named topics that do not exist get UNKNOWN_TOPIC_OR_PARTITION (or
 * INVALID_TOPIC_EXCEPTION for illegal names); a cursor topic missing from the named topics is INVALID_REQUEST.
 * Immutable, thread-safe, never blocks.
 */
public final class DescribeTopicPartitionsHandler
        implements ApiHandler<DescribeTopicPartitionsRequestData, DescribeTopicPartitionsResponseData> {

    /** Kafka's max.request.partition.size.limit default. */
    static final int MAX_PARTITIONS_PER_RESPONSE = 2000;

    private final MetadataNode metadata;

    public DescribeTopicPartitionsHandler(MetadataNode metadata) {
        this.metadata = metadata;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.DESCRIBE_TOPIC_PARTITIONS;
    }

    @Override
    public short minVersion() {
        return 0;
    }

    @Override
    public short maxVersion() {
        return 0;
    }

    @Override
    public CompletionStage<DescribeTopicPartitionsResponseData> handle(RequestContext ctx,
            DescribeTopicPartitionsRequestData request) {
        MetadataImage image = metadata.currentImage();
        DescribeTopicPartitionsRequestData.Cursor cursor = request.cursor();
        boolean allTopics = request.topics().isEmpty();
        TreeSet<String> names = new TreeSet<>();
        if (allTopics) {
            names.addAll(image.topicIds().keySet());
        } else {
            request.topics().forEach(t -> names.add(t.name()));
        }
        if (cursor != null) {
            if (!allTopics && !names.contains(cursor.topicName())) {
                return completedFuture(errorResponse(ctx, request, Errors.INVALID_REQUEST));
            }
            if (cursor.partitionIndex() < 0) {
                return completedFuture(errorResponse(ctx, request, Errors.INVALID_REQUEST));
            }
            names.removeIf(name -> name.compareTo(cursor.topicName()) < 0);
        }
        // Kafka: topics the caller may not DESCRIBE are left out of a list-all, and named ones answer
        // TOPIC_AUTHORIZATION_FAILED after the others.
        List<DescribeTopicPartitionsResponseTopic> refused = new ArrayList<>();
        names.removeIf(name -> {
            if (ctx.authorize(AclOperation.DESCRIBE, AclResourceType.TOPIC, name)) {
                return false;
            }
            if (!allTopics) {
                refused.add(new DescribeTopicPartitionsResponseTopic()
                        .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code()).setName(name).setTopicId(Uuid.ZERO)
                        .setIsInternal(false));
            }
            return true;
        });
        int remaining = Math.max(Math.min(MAX_PARTITIONS_PER_RESPONSE, request.responsePartitionLimit()), 1);
        DescribeTopicPartitionsResponseData response = new DescribeTopicPartitionsResponseData().setThrottleTimeMs(0);
        for (String name : names) {
            if (remaining == 0) {
                response.setNextCursor(new Cursor().setTopicName(name).setPartitionIndex(0));
                break;
            }
            Optional<TopicImage> topic = image.topic(name);
            if (topic.isEmpty()) {
                if (!allTopics) {
                    Errors error = TopicNames.validate(name).isPresent() ? Errors.INVALID_TOPIC_EXCEPTION
                            : Errors.UNKNOWN_TOPIC_OR_PARTITION;
                    response.topics().add(new DescribeTopicPartitionsResponseTopic().setErrorCode(error.code())
                            .setName(name).setTopicId(Uuid.ZERO).setIsInternal(ClusterView.isInternal(name))
                            .setTopicAuthorizedOperations(
                            ctx.authorizedOperations(AclResourceType.TOPIC, name, ClusterView.TOPIC_OPERATIONS)));
                }
                continue;
            }
            int start = cursor != null && name.equals(cursor.topicName()) ? cursor.partitionIndex() : 0;
            int count = topic.get().partitions().size();
            int end = (int) Math.min(count, (long) start + remaining);
            List<DescribeTopicPartitionsResponsePartition> partitions = new ArrayList<>();
            for (int index = start; index < end; index++) {
                PartitionRegistration partition = topic.get().partitions().get(index);
                if (partition != null) {
                    partitions.add(partition(image, index, partition, ctx.listenerName()));
                }
            }
            response.topics().add(new DescribeTopicPartitionsResponseTopic().setErrorCode(Errors.NONE.code())
                    .setName(name).setTopicId(topic.get().id()).setIsInternal(ClusterView.isInternal(name))
                    .setPartitions(partitions).setTopicAuthorizedOperations(
                            ctx.authorizedOperations(AclResourceType.TOPIC, name, ClusterView.TOPIC_OPERATIONS)));
            if (end < count) {
                response.setNextCursor(new Cursor().setTopicName(name).setPartitionIndex(end));
                break;
            }
            remaining -= Math.max(end - start, 0);
        }
        response.topics().addAll(refused);
        return completedFuture(response);
    }

    private static DescribeTopicPartitionsResponsePartition partition(MetadataImage image, int index,
            PartitionRegistration partition, String listener) {
        DescribeTopicPartitionsResponsePartition result = new DescribeTopicPartitionsResponsePartition()
                .setPartitionIndex(index).setLeaderEpoch(partition.leaderEpoch())
                .setReplicaNodes(new ArrayList<>(partition.replicas())).setIsrNodes(new ArrayList<>(partition.isr()))
                .setEligibleLeaderReplicas(new ArrayList<>(partition.elr()))
                .setLastKnownElr(new ArrayList<>(partition.lastKnownElr()))
                .setOfflineReplicas(ClusterView.offlineReplicas(image, partition, listener));
        if (ClusterView.aliveEndpoint(image, partition.leader(), listener).isEmpty()) {
            Errors error = image.broker(partition.leader()).isPresent() ? Errors.LISTENER_NOT_FOUND
                    : Errors.LEADER_NOT_AVAILABLE;
            return result.setErrorCode(error.code()).setLeaderId(PartitionRegistration.NO_LEADER);
        }
        return result.setErrorCode(Errors.NONE.code()).setLeaderId(partition.leader());
    }

    /** Kafka's DescribeTopicPartitionsRequest.getErrorResponse: every named topic with the error. */
    @Override
    public DescribeTopicPartitionsResponseData errorResponse(RequestContext ctx,
            DescribeTopicPartitionsRequestData request, Errors error) {
        DescribeTopicPartitionsResponseData response = new DescribeTopicPartitionsResponseData().setThrottleTimeMs(0);
        request.topics().forEach(t -> response.topics().add(new DescribeTopicPartitionsResponseTopic()
                .setErrorCode(error.code()).setName(t.name()).setTopicId(Uuid.ZERO).setIsInternal(false)));
        return response;
    }
}
