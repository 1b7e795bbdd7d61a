package io.cairn.broker.handler;

import io.cairn.broker.share.ShareCoordinator;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.DeleteShareGroupStateRequestData;
import io.cairn.wire.message.DeleteShareGroupStateResponseData;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * DeleteShareGroupState v0 (KIP-932), the group coordinator's
 * deletion of share-partitions' state, served by the {@link ShareCoordinator} as Kafka 4.1 serves it, whatever
 * {@code share.version} says; only callers with CLUSTER_ACTION on the cluster may send it (the registry wraps this
 * handler in {@link ClusterAuthorizedHandler}). A whole-request failure gives every partition of the request the
 * error and its default message. Immutable, thread-safe.
 */
public final class DeleteShareGroupStateHandler
        implements ApiHandler<DeleteShareGroupStateRequestData, DeleteShareGroupStateResponseData> {

    private final ShareCoordinator coordinator;

    public DeleteShareGroupStateHandler(ShareCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.DELETE_SHARE_GROUP_STATE;
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
    public CompletionStage<DeleteShareGroupStateResponseData> handle(RequestContext ctx,
                                                      DeleteShareGroupStateRequestData request) {
        return coordinator.deleteState(request);
    }

    @Override
    public DeleteShareGroupStateResponseData errorResponse(RequestContext ctx,
                                            DeleteShareGroupStateRequestData request, Errors error) {
        List<DeleteShareGroupStateResponseData.DeleteStateResult> results = new ArrayList<>();
        for (DeleteShareGroupStateRequestData.DeleteStateData topic : request.topics()) {
            List<DeleteShareGroupStateResponseData.PartitionResult> partitions = new ArrayList<>();
            topic.partitions().forEach(p -> partitions.add(new DeleteShareGroupStateResponseData.PartitionResult()
                .setPartition(p.partition()).setErrorCode(error.code()).setErrorMessage(error.message())));
            results.add(new DeleteShareGroupStateResponseData.DeleteStateResult().setTopicId(topic.topicId())
                .setPartitions(partitions));
        }
        return new DeleteShareGroupStateResponseData().setResults(results);
    }

    @Override
    public void countErrors(DeleteShareGroupStateResponseData response, ErrorCounter counter) {
        response.results().forEach(topic -> topic.partitions().forEach(p -> counter.count(p.errorCode())));
    }
}
