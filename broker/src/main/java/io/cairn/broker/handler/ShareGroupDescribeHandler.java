package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;

import io.cairn.broker.group.GroupCoordinator;
import io.cairn.broker.share.ShareGroupsGate;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ShareGroupDescribeRequestData;
import io.cairn.wire.message.ShareGroupDescribeResponseData;
import io.cairn.wire.message.ShareGroupDescribeResponseData.DescribedGroup;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * ShareGroupDescribe v1 (KIP-932; Kafka 4.1 serves v1 only), each group from its coordinator shard, as Kafka's
 * KafkaApis and GroupCoordinatorService: UNSUPPORTED_VERSION for every group while share groups are disabled
 * ({@link ShareGroupsGate}); DESCRIBE on each group (else GROUP_AUTHORIZATION_FAILED); INVALID_GROUP_ID for an empty
 * id; the coordinator errors (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, ...); GROUP_ID_NOT_FOUND for an unknown
 * group or one of another type; a group whose assignment names a topic the caller may not describe is
 * TOPIC_AUTHORIZATION_FAILED; authorized operations when asked for. Immutable, thread-safe, never blocks.
 */
public final class ShareGroupDescribeHandler
        implements ApiHandler<ShareGroupDescribeRequestData, ShareGroupDescribeResponseData> {

    private final GroupCoordinator coordinator;
    private final ShareGroupsGate gate;

    public ShareGroupDescribeHandler(GroupCoordinator coordinator, ShareGroupsGate gate) {
        this.coordinator = coordinator;
        this.gate = gate;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.SHARE_GROUP_DESCRIBE;
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
    public CompletionStage<ShareGroupDescribeResponseData> handle(RequestContext ctx,
                                                                  ShareGroupDescribeRequestData request) {
        if (!gate.enabled()) {
            return completedFuture(errorResponse(ctx, request, Errors.UNSUPPORTED_VERSION));
        }
        List<DescribedGroup> refused = new ArrayList<>();
        List<CompletableFuture<DescribedGroup>> groups = new ArrayList<>();
        for (String groupId : request.groupIds()) {
            if (!ctx.authorize(AclOperation.DESCRIBE, AclResourceType.GROUP, groupId == null ? "" : groupId)) {
                refused.add(groupError(groupId, Errors.GROUP_AUTHORIZATION_FAILED));
                continue;
            }
            groups.add(describe(groupId).thenApply(group -> authorized(ctx, request, group)));
        }
        return CompletableFuture.allOf(groups.toArray(CompletableFuture[]::new)).thenApply(ignored -> {
            ShareGroupDescribeResponseData response = new ShareGroupDescribeResponseData().setThrottleTimeMs(0);
            response.groups().addAll(refused);
            groups.forEach(g -> response.groups().add(g.join()));
            return response;
        });
    }

    private CompletableFuture<DescribedGroup> describe(String groupId) {
        if (groupId == null || groupId.isEmpty()) {
            return completedFuture(groupError(groupId, Errors.INVALID_GROUP_ID));
        }
        CompletableFuture<DescribedGroup> answer;
        try {
            answer = coordinator.call(groupId, shard -> completedFuture(shard.shareGroups().describe(groupId)));
        } catch (RuntimeException e) {
            answer = CompletableFuture.failedFuture(e);
        }
        return answer.exceptionally(failure -> groupError(groupId, Errors.forException(failure)));
    }

    private static DescribedGroup authorized(RequestContext ctx, ShareGroupDescribeRequestData request,
                                             DescribedGroup group) {
        if (group.errorCode() != Errors.NONE.code()) {
            return group;
        }
        boolean hidden = group.members().stream().flatMap(m -> m.assignment().topicPartitions().stream())
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
        return new DescribedGroup().setGroupId(groupId).setErrorCode(error.code()).setErrorMessage(error.message());
    }

    /** Kafka's ShareGroupDescribeRequest.getErrorDescribedGroupList: every group with the error and its message. */
    @Override
    public ShareGroupDescribeResponseData errorResponse(RequestContext ctx, ShareGroupDescribeRequestData request,
                                                        Errors error) {
        ShareGroupDescribeResponseData response = new ShareGroupDescribeResponseData().setThrottleTimeMs(0);
        request.groupIds().forEach(groupId -> response.groups().add(groupError(groupId, error)));
        return response;
    }
}
