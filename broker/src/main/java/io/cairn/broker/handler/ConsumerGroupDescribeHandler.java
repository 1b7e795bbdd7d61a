package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;

import io.cairn.broker.group.GroupCoordinator;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.metadata.image.Features;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ConsumerGroupDescribeRequestData;
import io.cairn.wire.message.ConsumerGroupDescribeResponseData;
import io.cairn.wire.message.ConsumerGroupDescribeResponseData.DescribedGroup;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.stream.Stream;

/**
 * ConsumerGroupDescribe v0-v1 (KIP-848; v1 adds each member's type, KIP-1099): each group is described by its
 * coordinator shard (state, epochs, assignor, members with their current and target assignments). As Kafka's
 * KafkaApis: UNSUPPORTED_VERSION while {@code group.version} is below 1; groups the caller may not DESCRIBE come first
 * with GROUP_AUTHORIZATION_FAILED; a group naming a topic the caller may not describe is TOPIC_AUTHORIZATION_FAILED; a
 * group this broker does not coordinate carries NOT_COORDINATOR (or COORDINATOR_LOAD_IN_PROGRESS), an empty id
 * INVALID_GROUP_ID, a classic or unknown group GROUP_ID_NOT_FOUND. Immutable, thread-safe, never blocks.
 */
public final class ConsumerGroupDescribeHandler
        implements ApiHandler<ConsumerGroupDescribeRequestData, ConsumerGroupDescribeResponseData> {

    private final GroupCoordinator coordinator;
    private final MetadataNode metadata;

    public ConsumerGroupDescribeHandler(GroupCoordinator coordinator, MetadataNode metadata) {
        this.coordinator = coordinator;
        this.metadata = metadata;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.CONSUMER_GROUP_DESCRIBE;
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
    public CompletionStage<ConsumerGroupDescribeResponseData> handle(RequestContext ctx,
                                                                     ConsumerGroupDescribeRequestData request) {
        if (!Features.consumerGroupsEnabled(metadata.currentImage())) {
            return completedFuture(errorResponse(ctx, request, Errors.UNSUPPORTED_VERSION));
        }
        short version = ctx.apiVersion();
        List<DescribedGroup> refused = new ArrayList<>();
        List<CompletableFuture<DescribedGroup>> groups = new ArrayList<>();
        for (String groupId : request.groupIds()) {
            if (!ctx.authorize(AclOperation.DESCRIBE, AclResourceType.GROUP, groupId == null ? "" : groupId)) {
                refused.add(groupError(groupId, Errors.GROUP_AUTHORIZATION_FAILED));
                continue;
            }
            groups.add(describe(groupId, version).thenApply(group -> authorized(ctx, request, group)));
        }
        return CompletableFuture.allOf(groups.toArray(CompletableFuture[]::new)).thenApply(ignored -> {
            ConsumerGroupDescribeResponseData response = new ConsumerGroupDescribeResponseData().setThrottleTimeMs(0);
            response.groups().addAll(refused);
            groups.forEach(g -> response.groups().add(g.join()));
            return response;
        });
    }

    private CompletableFuture<DescribedGroup> describe(String groupId, short version) {
        if (groupId == null || groupId.isEmpty()) {
            return completedFuture(groupError(groupId, Errors.INVALID_GROUP_ID));
        }
        CompletableFuture<DescribedGroup> answer;
        try {
            answer = coordinator.call(groupId, shard ->
                completedFuture(shard.consumerGroups().describe(groupId, version)));
        } catch (RuntimeException e) {
            answer = CompletableFuture.failedFuture(e);
        }
        return answer.exceptionally(failure -> groupError(groupId, Errors.forException(failure)));
    }

    /** Kafka's topic check of a described group, then its authorized operations when asked for. */
    private static DescribedGroup authorized(RequestContext ctx, ConsumerGroupDescribeRequestData request,
                                             DescribedGroup group) {
        if (group.errorCode() != Errors.NONE.code()) {
            return group;
        }
        boolean hidden = group.members().stream()
            .flatMap(member -> Stream.of(member.assignment(), member.targetAssignment()))
            .flatMap(assignment -> assignment.topicPartitions().stream())
            .anyMatch(tp -> !ctx.authorize(AclOperation.DESCRIBE, AclResourceType.TOPIC, tp.topicName()));
        if (hidden) {
            return groupError(group.groupId(), Errors.TOPIC_AUTHORIZATION_FAILED)
                .setErrorMessage("The group has described topic(s) that the client is not authorized to describe.");
        }
        if (request.includeAuthorizedOperations()) {
            group.setAuthorizedOperations(ctx.authorizedOperations(AclResourceType.GROUP, group.groupId(),
                DescribeGroupsHandler.GROUP_OPERATIONS));
        }
        return group;
    }

    private static DescribedGroup groupError(String groupId, Errors error) {
        return new DescribedGroup().setGroupId(groupId).setErrorCode(error.code());
    }

    /** Kafka's ConsumerGroupDescribeRequest.getErrorResponse: every group with the error code. */
    @Override
    public ConsumerGroupDescribeResponseData errorResponse(RequestContext ctx, ConsumerGroupDescribeRequestData request,
                                                           Errors error) {
        ConsumerGroupDescribeResponseData response = new ConsumerGroupDescribeResponseData().setThrottleTimeMs(0);
        request.groupIds().forEach(groupId -> response.groups().add(groupError(groupId, error)));
        return response;
    }
}
