package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;

import io.cairn.broker.group.ShareOffsetsCoordinator;
import io.cairn.broker.share.ShareGroupsGate;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.TopicImage;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AlterShareGroupOffsetsRequestData;
import io.cairn.wire.message.AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestTopic;
import io.cairn.wire.message.AlterShareGroupOffsetsResponseData;
import io.cairn.wire.message.AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponsePartition;
import io.cairn.wire.message.AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponseTopic;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * AlterShareGroupOffsets v0 (KIP-932), as Kafka 4.1's KafkaApis: UNSUPPORTED_VERSION while share groups are disabled
 * ({@link ShareGroupsGate}), GROUP_AUTHORIZATION_FAILED without READ on the group; a topic the caller may not READ is
 * TOPIC_AUTHORIZATION_FAILED and an unknown one UNKNOWN_TOPIC_OR_PARTITION, per partition; the others go to the group
 * coordinator ({@link ShareOffsetsCoordinator}), whose group-level error (GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP, ...) is
 * the whole answer. Immutable, thread-safe, never blocks.
 */
public final class AlterShareGroupOffsetsHandler
        implements ApiHandler<AlterShareGroupOffsetsRequestData, AlterShareGroupOffsetsResponseData> {

    private final ShareOffsetsCoordinator offsets;
    private final ShareGroupsGate gate;
    private final Supplier<MetadataImage> image;

    public AlterShareGroupOffsetsHandler(ShareOffsetsCoordinator offsets, ShareGroupsGate gate,
                                         Supplier<MetadataImage> image) {
        this.offsets = offsets;
        this.gate = gate;
        this.image = image;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.ALTER_SHARE_GROUP_OFFSETS;
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
    public CompletionStage<AlterShareGroupOffsetsResponseData> handle(RequestContext ctx,
                                                                     AlterShareGroupOffsetsRequestData request) {
        if (!gate.enabled()) {
            return completedFuture(errorResponse(ctx, request, Errors.UNSUPPORTED_VERSION));
        }
        String groupId = request.groupId();
        if (!ctx.authorize(AclOperation.READ, AclResourceType.GROUP, groupId == null ? "" : groupId)) {
            return completedFuture(errorResponse(ctx, request, Errors.GROUP_AUTHORIZATION_FAILED));
        }
        if (groupId == null || groupId.isEmpty()) {
            return completedFuture(errorResponse(ctx, request, Errors.INVALID_GROUP_ID));
        }
        MetadataImage current = image.get();
        List<AlterShareGroupOffsetsResponseTopic> refused = new ArrayList<>();
        AlterShareGroupOffsetsRequestData authorized = new AlterShareGroupOffsetsRequestData().setGroupId(groupId);
        for (AlterShareGroupOffsetsRequestTopic topic : request.topics()) {
            Errors error = !ctx.authorize(AclOperation.READ, AclResourceType.TOPIC, topic.topicName())
                ? Errors.TOPIC_AUTHORIZATION_FAILED
                : current.topic(topic.topicName()).isEmpty() ? Errors.UNKNOWN_TOPIC_OR_PARTITION : Errors.NONE;
            if (error == Errors.NONE) {
                authorized.topics().add(topic);
                continue;
            }
            AlterShareGroupOffsetsResponseTopic answer = new AlterShareGroupOffsetsResponseTopic()
                .setTopicName(topic.topicName())
                .setTopicId(current.topic(topic.topicName()).map(TopicImage::id).orElse(Uuid.ZERO));
            topic.partitions().forEach(p -> answer.partitions().add(new AlterShareGroupOffsetsResponsePartition()
                .setPartitionIndex(p.partitionIndex()).setErrorCode(error.code()).setErrorMessage(error.message())));
            refused.add(answer);
        }
        return offsets.alter(groupId, authorized).thenApply(response -> {
            if (response.errorCode() != Errors.NONE.code()) {
                return new AlterShareGroupOffsetsResponseData().setThrottleTimeMs(0)
                    .setErrorCode(response.errorCode()).setErrorMessage(response.errorMessage());
            }
            AlterShareGroupOffsetsResponseData merged = new AlterShareGroupOffsetsResponseData().setThrottleTimeMs(0);
            merged.responses().addAll(refused);
            merged.responses().addAll(response.responses());
            return merged;
        });
    }

    /** Kafka's AlterShareGroupOffsetsRequest.getErrorResponse: the top-level error and its message. */
    @Override
    public AlterShareGroupOffsetsResponseData errorResponse(RequestContext ctx,
                                                           AlterShareGroupOffsetsRequestData request, Errors error) {
        return new AlterShareGroupOffsetsResponseData().setThrottleTimeMs(0).setErrorCode(error.code())
            .setErrorMessage(error.message());
    }
}
