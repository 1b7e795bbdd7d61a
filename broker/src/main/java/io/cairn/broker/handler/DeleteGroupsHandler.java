package io.cairn.broker.handler;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.group.GroupCoordinator;
import io.cairn.broker.group.GroupShard;
import io.cairn.broker.group.ShareOffsetsCoordinator;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.DeleteGroupsRequestData;
import io.cairn.wire.message.DeleteGroupsResponseData;
import io.cairn.wire.message.DeleteGroupsResponseData.DeletableGroupResult;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * DeleteGroups v0-v2: each group, classic, consumer (KIP-848) or share (KIP-932), is deleted on its coordinator shard
 * when it has no members (NON_EMPTY_GROUP otherwise, GROUP_ID_NOT_FOUND for an unknown group): the tombstones of its
 * offsets and of its metadata are written together and the group is gone once they are committed. A share group's
 * share-partition state is deleted at the share coordinator first (DeleteShareGroupState); when that fails the
 * group stays and its answer is the share coordinator's error. Immutable, thread-safe.
 */
public final class DeleteGroupsHandler implements ApiHandler<DeleteGroupsRequestData, DeleteGroupsResponseData> {

    private final GroupCoordinator coordinator;
    private final ShareOffsetsCoordinator shares;

    public DeleteGroupsHandler(GroupCoordinator coordinator) {
        this.coordinator = coordinator;
        this.shares = new ShareOffsetsCoordinator(coordinator);
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.DELETE_GROUPS;
    }

    @Override
    public short minVersion() {
        return 0;
    }

    @Override
    public short maxVersion() {
        return 2;
    }

    @Override
    public CompletionStage<DeleteGroupsResponseData> handle(RequestContext ctx, DeleteGroupsRequestData request) {
        List<CompletableFuture<DeletableGroupResult>> results = new ArrayList<>();
        for (String groupId : request.groupsNames()) {
            if (!ctx.authorize(AclOperation.DELETE, AclResourceType.GROUP, groupId)) {
                results.add(CompletableFuture.completedFuture(new DeletableGroupResult().setGroupId(groupId)
                    .setErrorCode(Errors.GROUP_AUTHORIZATION_FAILED.code())));
                continue;
            }
            results.add(delete(groupId).thenApply(error -> new DeletableGroupResult().setGroupId(groupId)
                .setErrorCode(error.code())));
        }
        return CompletableFuture.allOf(results.toArray(CompletableFuture[]::new)).thenApply(ignored -> {
            DeleteGroupsResponseData response = new DeleteGroupsResponseData().setThrottleTimeMs(0);
            results.forEach(r -> response.results().add(r.join()));
            return response;
        });
    }

    private CompletableFuture<Errors> delete(String groupId) {
        if (groupId == null || groupId.isEmpty()) {
            return CompletableFuture.completedFuture(Errors.INVALID_GROUP_ID);
        }
        CompletableFuture<Errors> answer;
        // A share group's share-partition state goes first (Kafka's deleteShareGroups), then the group itself.
        answer = shares.deleteGroupState(groupId).thenCompose(shareError -> {
            if (shareError != Errors.NONE && shareError != Errors.GROUP_ID_NOT_FOUND) {
                return CompletableFuture.completedFuture(shareError);
            }
            return coordinator.call(groupId, shard -> delete(shard, groupId));
        });
        return answer.exceptionally(failure -> {
            Errors error = Errors.forException(failure);
            return error == Errors.NOT_LEADER_OR_FOLLOWER ? Errors.NOT_COORDINATOR : error;
        });
    }

    private static CompletableFuture<Errors> delete(GroupShard shard, String groupId) {
        Errors error = shard.validateDeleteGroup(groupId);
        if (error != Errors.NONE) {
            return CompletableFuture.completedFuture(error);
        }
        List<CoordinatorRecord> records = new ArrayList<>(shard.offsets().deleteAllRecords(groupId));
        records.addAll(shard.deleteGroup(groupId));
        shard.offsets().forgetGroup(groupId);
        return shard.write(records).thenApply(ignored -> Errors.NONE);
    }

    @Override
    public DeleteGroupsResponseData errorResponse(RequestContext ctx, DeleteGroupsRequestData request, Errors error) {
        DeleteGroupsResponseData response = new DeleteGroupsResponseData().setThrottleTimeMs(0);
        request.groupsNames().forEach(g -> response.results().add(new DeletableGroupResult().setGroupId(g)
            .setErrorCode(error.code())));
        return response;
    }
}
