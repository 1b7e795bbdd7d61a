package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;

import io.cairn.broker.group.ShareOffsetsCoordinator;
import io.cairn.broker.share.ShareGroupsGate;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.DeleteShareGroupOffsetsRequestData;
import io.cairn.wire.message.DeleteShareGroupOffsetsRequestData.DeleteShareGroupOffsetsRequestTopic;
import io.cairn.wire.message.DeleteShareGroupOffsetsResponseData;
import io.cairn.wire.message.DeleteShareGroupOffsetsResponseData.DeleteShareGroupOffsetsResponseTopic;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * DeleteShareGroupOffsets v0 (KIP-932), as Kafka 4.1's KafkaApis: UNSUPPORTED_VERSION while share groups are disabled
 * ({@link ShareGroupsGate}), GROUP_AUTHORIZATION_FAILED without DELETE on the group, INVALID_GROUP_ID for an empty
 * id; a topic the caller may not READ is TOPIC_AUTHORIZATION_FAILED; the others go to the group coordinator
 * ({@link ShareOffsetsCoordinator}), whose group-level error (GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP, ...) is the whole
 * answer, else each topic's outcome (UNKNOWN_TOPIC_OR_PARTITION for an unknown topic or one without state).
 * Immutable, thread-safe, never blocks.
 */
public final class DeleteShareGroupOffsetsHandler
        implements ApiHandler<DeleteShareGroupOffsetsRequestData, DeleteShareGroupOffsetsResponseData> {

    private final ShareOffsetsCoordinator offsets;
    private final ShareGroupsGate gate;

    public DeleteShareGroupOffsetsHandler(ShareOffsetsCoordinator offsets, ShareGroupsGate gate) {
        this.offsets = offsets;
        this.gate = gate;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.DELETE_SHARE_GROUP_OFFSETS;
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
    public CompletionStage<DeleteShareGroupOffsetsResponseData> handle(RequestContext ctx,
                                                                      DeleteShareGroupOffsetsRequestData request) {
        if (!gate.enabled()) {
            return completedFuture(errorResponse(ctx, request, Errors.UNSUPPORTED_VERSION));
        }
        String groupId = request.groupId();
        if (!ctx.authorize(AclOperation.DELETE, AclResourceType.GROUP, groupId == null ? "" : groupId)) {
            return completedFuture(errorResponse(ctx, request, Errors.GROUP_AUTHORIZATION_FAILED));
        }
        if (groupId == null || groupId.isEmpty()) {
            return completedFuture(errorResponse(ctx, request, Errors.INVALID_GROUP_ID));
        }
        List<DeleteShareGroupOffsetsResponseTopic> refused = new ArrayList<>();
        DeleteShareGroupOffsetsRequestData authorized = new DeleteShareGroupOffsetsRequestData().setGroupId(groupId);
        for (DeleteShareGroupOffsetsRequestTopic topic : request.topics()) {
            if (ctx.authorize(AclOperation.READ, AclResourceType.TOPIC, topic.topicName())) {
                authorized.topics().add(topic);
            } else {
                refused.add(new DeleteShareGroupOffsetsResponseTopic().setTopicName(topic.topicName())
                    .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())
                    .setErrorMessage(Errors.TOPIC_AUTHORIZATION_FAILED.message()));
            }
        }
        return offsets.deleteOffsets(groupId, authorized).thenApply(response -> {
            if (response.errorCode() != Errors.NONE.code()) {
                return new DeleteShareGroupOffsetsResponseData().setThrottleTimeMs(0)
                    .setErrorCode(response.errorCode()).setErrorMessage(response.errorMessage());
            }
            DeleteShareGroupOffsetsResponseData merged = new DeleteShareGroupOffsetsResponseData().setThrottleTimeMs(0);
            merged.responses().addAll(refused);
            merged.responses().addAll(response.responses());
            return merged;
        });
    }

    /** Kafka's DeleteShareGroupOffsetsRequest.getErrorResponse: the top-level error and its message. */
    @Override
    public DeleteShareGroupOffsetsResponseData errorResponse(RequestContext ctx,
                                                            DeleteShareGroupOffsetsRequestData request, Errors error) {
        return new DeleteShareGroupOffsetsResponseData().setThrottleTimeMs(0).setErrorCode(error.code())
            .setErrorMessage(error.message());
    }
}
