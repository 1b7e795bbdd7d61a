package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;

import io.cairn.broker.group.ClientInfo;
import io.cairn.broker.group.GroupCoordinator;
import io.cairn.broker.share.ShareGroupsGate;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ShareGroupHeartbeatRequestData;
import io.cairn.wire.message.ShareGroupHeartbeatResponseData;
import java.util.concurrent.CompletionStage;

/**
 * ShareGroupHeartbeat v1 (KIP-932; Kafka 4.1 serves v1 only): served by the group's {@code ShareGroupManager} on its
 * coordinator shard. As Kafka's KafkaApis: UNSUPPORTED_VERSION while share groups are disabled
 * ({@link ShareGroupsGate}), then READ on the group (else GROUP_AUTHORIZATION_FAILED) and DESCRIBE on every subscribed
 * topic (else TOPIC_AUTHORIZATION_FAILED). Immutable, thread-safe, never blocks.
 */
public final class ShareGroupHeartbeatHandler
        implements ApiHandler<ShareGroupHeartbeatRequestData, ShareGroupHeartbeatResponseData> {

    private final GroupCoordinator coordinator;
    private final ShareGroupsGate gate;

    public ShareGroupHeartbeatHandler(GroupCoordinator coordinator, ShareGroupsGate gate) {
        this.coordinator = coordinator;
        this.gate = gate;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.SHARE_GROUP_HEARTBEAT;
    }

    @Override
    public short minVersion() {
        return 1;
    }

    @Override
    public short maxVersion() {
        return 1;
    }

    @Override
    public CompletionStage<ShareGroupHeartbeatResponseData> handle(RequestContext ctx,
                                                                   ShareGroupHeartbeatRequestData request) {
        if (!gate.enabled()) {
            return completedFuture(errorResponse(ctx, request, Errors.UNSUPPORTED_VERSION));
        }
        String groupId = request.groupId() == null ? "" : request.groupId();
        if (!ctx.authorize(AclOperation.READ, AclResourceType.GROUP, groupId)) {
            return completedFuture(errorResponse(ctx, request, Errors.GROUP_AUTHORIZATION_FAILED));
        }
        if (request.subscribedTopicNames() != null && !request.subscribedTopicNames().stream()
                .allMatch(topic -> ctx.authorize(AclOperation.DESCRIBE, AclResourceType.TOPIC, topic))) {
            return completedFuture(errorResponse(ctx, request, Errors.TOPIC_AUTHORIZATION_FAILED));
        }
        ClientInfo client = GroupHandlers.clientInfo(ctx);
        return coordinator.shareGroupHeartbeat(client.clientId(), client.clientHost(), request);
    }

    /** Kafka's ShareGroupHeartbeatRequest.getErrorResponse: the error code alone. */
    @Override
    public ShareGroupHeartbeatResponseData errorResponse(RequestContext ctx, ShareGroupHeartbeatRequestData request,
                                                         Errors error) {
        return new ShareGroupHeartbeatResponseData().setThrottleTimeMs(0).setErrorCode(error.code());
    }
}
