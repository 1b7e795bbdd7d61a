package io.cairn.broker.handler;

import io.cairn.broker.share.ShareCoordinator;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.WriteShareGroupStateRequestData;
import io.cairn.wire.message.WriteShareGroupStateResponseData;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * WriteShareGroupState v0 (KIP-932), a share-partition leader's
 * write of its delivery state, served by the {@link ShareCoordinator} as Kafka 4.1 serves it, whatever
 * {@code share.version} says; only callers with CLUSTER_ACTION on the cluster may send it (the registry wraps this
 * handler in {@link ClusterAuthorizedHandler}). A whole-request failure gives every partition of the request the
 * error and its default message. Immutable, thread-safe.
 */
public final class WriteShareGroupStateHandler
        implements ApiHandler<WriteShareGroupStateRequestData, WriteShareGroupStateResponseData> {

    private final ShareCoordinator coordinator;

    public WriteShareGroupStateHandler(ShareCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.WRITE_SHARE_GROUP_STATE;
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
    public CompletionStage<WriteShareGroupStateResponseData> handle(RequestContext ctx,
                                                      WriteShareGroupStateRequestData request) {
        return coordinator.writeState(request);
    }

    @Override
    public WriteShareGroupStateResponseData errorResponse(RequestContext ctx,
                                            WriteShareGroupStateRequestData request, Errors error) {
        List<WriteShareGroupStateResponseData.WriteStateResult> results = new ArrayList<>();
        for (WriteShareGroupStateRequestData.WriteStateData topic : request.topics()) {
            List<WriteShareGroupStateResponseData.PartitionResult> partitions = new ArrayList<>();
            topic.partitions().forEach(p -> partitions.add(new WriteShareGroupStateResponseData.PartitionResult()
                .setPartition(p.partition()).setErrorCode(error.code()).setErrorMessage(error.message())));
            results.add(new WriteShareGroupStateResponseData.WriteStateResult().setTopicId(topic.topicId())
                .setPartitions(partitions));
        }
        return new WriteShareGroupStateResponseData().setResults(results);
    }

    @Override
    public void countErrors(WriteShareGroupStateResponseData response, ErrorCounter counter) {
        response.results().forEach(topic -> topic.partitions().forEach(p -> counter.count(p.errorCode())));
    }
}
