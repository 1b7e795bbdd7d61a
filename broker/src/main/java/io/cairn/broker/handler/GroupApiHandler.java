package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;

import io.cairn.broker.group.GroupCoordinator;
import io.cairn.broker.group.GroupShard;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.protocol.ApiMessage;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/**
 * A request about one group, served on the coordinator shard of the group's {@code __consumer_offsets} partition:
 * JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, OffsetDelete (see {@link GroupHandlers}). An empty
 * group id is INVALID_GROUP_ID; a group this broker does not coordinate is NOT_COORDINATOR, one still loading
 * COORDINATOR_LOAD_IN_PROGRESS (the client finds the coordinator again, or retries). First of all, as Kafka's
 * KafkaApis, the caller needs READ on the group (DELETE for OffsetDelete), else GROUP_AUTHORIZATION_FAILED.
 * Immutable, thread-safe, never blocks.
 *
 * @param <Q> the request body type
 * @param <S> the response body type
 */
final class GroupApiHandler<Q extends ApiMessage, S extends ApiMessage> implements ApiHandler<Q, S> {

    /** Serves a request on its shard; runs on the coordinator thread. */
    @FunctionalInterface
    interface ShardOp<Q, S> {
        CompletableFuture<S> apply(GroupShard shard, RequestContext ctx, Q request);
    }

    /** The response of a request that failed as a whole. */
    @FunctionalInterface
    interface ErrorResponse<Q, S> {
        S apply(RequestContext ctx, Q request, Errors error);
    }

    private final ApiKey apiKey;
    private final short minVersion;
    private final short maxVersion;
    private final GroupCoordinator coordinator;
    private final Function<Q, String> groupId;
    private final ShardOp<Q, S> op;
    private final ErrorResponse<Q, S> errorResponse;

    GroupApiHandler(ApiKey apiKey, int minVersion, int maxVersion, GroupCoordinator coordinator,
                    Function<Q, String> groupId, ShardOp<Q, S> op, ErrorResponse<Q, S> errorResponse) {
        this.apiKey = apiKey;
        this.minVersion = (short) minVersion;
        this.maxVersion = (short) maxVersion;
        this.coordinator = coordinator;
        this.groupId = groupId;
        this.op = op;
        this.errorResponse = errorResponse;
    }

    @Override
    public ApiKey apiKey() {
        return apiKey;
    }

    @Override
    public short minVersion() {
        return minVersion;
    }

    @Override
    public short maxVersion() {
        return maxVersion;
    }

    /**
     * The operation Kafka's KafkaApis asks on the group before serving: DELETE for OffsetDelete, READ for the others.
     * Without it the whole request is GROUP_AUTHORIZATION_FAILED.
     */
    private AclOperation groupOperation() {
        return apiKey == ApiKey.OFFSET_DELETE ? AclOperation.DELETE : AclOperation.READ;
    }

    @Override
    public CompletionStage<S> handle(RequestContext ctx, Q request) {
        String group = groupId.apply(request);
        if (!ctx.authorize(groupOperation(), AclResourceType.GROUP, group == null ? "" : group)) {
            return completedFuture(errorResponse(ctx, request, Errors.GROUP_AUTHORIZATION_FAILED));
        }
        if (group == null || group.isEmpty()) {
            return completedFuture(errorResponse(ctx, request, Errors.INVALID_GROUP_ID));
        }
        return coordinator.call(group, shard -> op.apply(shard, ctx, request));
    }

    @Override
    public S errorResponse(RequestContext ctx, Q request, Errors error) {
        return errorResponse.apply(ctx, request, error);
    }
}
