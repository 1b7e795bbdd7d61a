package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;

import io.cairn.broker.group.ClientInfo;
import io.cairn.broker.group.GroupCoordinator;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.metadata.image.Features;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ConsumerGroupHeartbeatRequestData;
import io.cairn.wire.message.ConsumerGroupHeartbeatResponseData;
import java.util.concurrent.CompletionStage;
import java.util.function.Predicate;

/**
 * ConsumerGroupHeartbeat v0-v1 (KIP-848; v1 adds the client-generated member id rule and SubscribedTopicRegex):
 * served by the group's {@code ConsumerGroupManager} on its coordinator shard. As Kafka's KafkaApis:
 * UNSUPPORTED_VERSION while {@code group.version} is below 1, then READ on the group (else
 * GROUP_AUTHORIZATION_FAILED) and DESCRIBE on every subscribed topic name (else TOPIC_AUTHORIZATION_FAILED); a regular
 * expression matches only topics the caller may describe. Immutable, thread-safe, never blocks.
 */
public final class ConsumerGroupHeartbeatHandler
        implements ApiHandler<ConsumerGroupHeartbeatRequestData, ConsumerGroupHeartbeatResponseData> {

    private final GroupCoordinator coordinator;
    private final MetadataNode metadata;

    public ConsumerGroupHeartbeatHandler(GroupCoordinator coordinator, MetadataNode metadata) {
        this.coordinator = coordinator;
        this.metadata = metadata;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.CONSUMER_GROUP_HEARTBEAT;
    }

    @Override
    public short minVersion() {
        return 0;
    }

    @Override
    public short maxVersion() {
        return 1;
    }

    @Override
    public CompletionStage<ConsumerGroupHeartbeatResponseData> handle(RequestContext ctx,
                                                                      ConsumerGroupHeartbeatRequestData request) {
        if (!Features.consumerGroupsEnabled(metadata.currentImage())) {
            return completedFuture(errorResponse(ctx, request, Errors.UNSUPPORTED_VERSION));
        }
        String groupId = request.groupId() == null ? "" : request.groupId();
        if (!ctx.authorize(AclOperation.READ, AclResourceType.GROUP, groupId)) {
            return completedFuture(errorResponse(ctx, request, Errors.GROUP_AUTHORIZATION_FAILED));
        }
        Predicate<String> describable = topic -> ctx.authorize(AclOperation.DESCRIBE, AclResourceType.TOPIC, topic);
        if (request.subscribedTopicNames() != null
                && !request.subscribedTopicNames().stream().allMatch(describable)) {
            return completedFuture(errorResponse(ctx, request, Errors.TOPIC_AUTHORIZATION_FAILED));
        }
        ClientInfo client = GroupHandlers.clientInfo(ctx);
        short version = ctx.apiVersion();
        return coordinator.call(groupId, shard -> shard.consumerGroups().heartbeat(client.clientId(),
            client.clientHost(), request, version, describable));
    }

    /** Kafka's ConsumerGroupHeartbeatRequest.getErrorResponse: the error code alone. */
    @Override
    public ConsumerGroupHeartbeatResponseData errorResponse(RequestContext ctx,
                                                           ConsumerGroupHeartbeatRequestData request, Errors error) {
        return new ConsumerGroupHeartbeatResponseData().setThrottleTimeMs(0).setErrorCode(error.code());
    }
}
