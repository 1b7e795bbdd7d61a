package io.cairn.broker.handler;

import io.cairn.broker.group.GroupCoordinator;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.DescribeGroupsRequestData;
import io.cairn.wire.message.DescribeGroupsResponseData;
import io.cairn.wire.message.DescribeGroupsResponseData.DescribedGroup;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * DescribeGroups v0-v6: each group is described by its coordinator shard (state, protocol, members with their
 * metadata and assignment); a group this broker does not coordinate carries NOT_COORDINATOR (or
 * COORDINATOR_LOAD_IN_PROGRESS) with Kafka's empty fields; an empty group id is INVALID_GROUP_ID; a consumer group
 * (KIP-848) is not a classic group, which Kafka answers as an unknown one (Dead, GROUP_ID_NOT_FOUND from v6). With
 * {@code include_authorized_operations} (v3+) every group operation is allowed: Cairn has no authorizer yet, as a
 * Kafka broker without one. Immutable, thread-safe.
 */
public final class DescribeGroupsHandler implements ApiHandler<DescribeGroupsRequestData, DescribeGroupsResponseData> {

    /** READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS: Kafka's operations on a group resource. */
    static final int GROUP_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8) | (1 << 10) | (1 << 11);

    private final GroupCoordinator coordinator;

    public DescribeGroupsHandler(GroupCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.DESCRIBE_GROUPS;
    }

    @Override
    public short minVersion() {
        return 0;
    }

    @Override
    public short maxVersion() {
        return 6;
    }

    @Override
    public CompletionStage<DescribeGroupsResponseData> handle(RequestContext ctx, DescribeGroupsRequestData request) {
        short version = ctx.apiVersion();
        List<CompletableFuture<DescribedGroup>> groups = new ArrayList<>();
        for (String groupId : request.groups()) {
            if (!ctx.authorize(AclOperation.DESCRIBE, AclResourceType.GROUP, groupId)) {
                groups.add(CompletableFuture.completedFuture(groupError(groupId, Errors.GROUP_AUTHORIZATION_FAILED)));
                continue;
            }
            groups.add(describe(groupId, version).thenApply(group -> {
                if (request.includeAuthorizedOperations() && group.errorCode() == Errors.NONE.code()) {
                    group.setAuthorizedOperations(ctx.authorizedOperations(AclResourceType.GROUP, groupId,
                        GROUP_OPERATIONS));
                }
                return group;
            }));
        }
        return CompletableFuture.allOf(groups.toArray(CompletableFuture[]::new)).thenApply(ignored -> {
            DescribeGroupsResponseData response = new DescribeGroupsResponseData().setThrottleTimeMs(0);
            groups.forEach(g -> response.groups().add(g.join()));
            return response;
        });
    }

    private CompletableFuture<DescribedGroup> describe(String groupId, short version) {
        if (groupId == null || groupId.isEmpty()) {
            return CompletableFuture.completedFuture(groupError(groupId, Errors.INVALID_GROUP_ID));
        }
        CompletableFuture<DescribedGroup> answer;
        try {
            answer = coordinator.call(groupId, shard ->
                CompletableFuture.completedFuture(shard.describeClassicGroup(groupId, version)));
        } catch (RuntimeException e) {
            answer = CompletableFuture.failedFuture(e);
        }
        return answer.exceptionally(failure -> groupError(groupId, Errors.forException(failure)));
    }

    /** Kafka's DescribeGroupsResponse.groupError. */
    static DescribedGroup groupError(String groupId, Errors error) {
        return new DescribedGroup().setGroupId(groupId).setErrorCode(error.code()).setGroupState("")
            .setProtocolType("").setProtocolData("").setMembers(new ArrayList<>())
            .setAuthorizedOperations(Integer.MIN_VALUE);
    }

    @Override
    public DescribeGroupsResponseData errorResponse(RequestContext ctx, DescribeGroupsRequestData request,
                                                    Errors error) {
        DescribeGroupsResponseData response = new DescribeGroupsResponseData().setThrottleTimeMs(0);
        request.groups().forEach(g -> response.groups().add(groupError(g, error)));
        return response;
    }
}
