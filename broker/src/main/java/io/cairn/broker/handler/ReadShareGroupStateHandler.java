package io.cairn.broker.handler;

import io.cairn.broker.share.ShareCoordinator;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ReadShareGroupStateRequestData;
import io.cairn.wire.message.ReadShareGroupStateResponseData;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * ReadShareGroupState v0 (KIP-932), a share-partition leader's
 * read of its persisted state, served by the {@link ShareCoordinator} as Kafka 4.1 serves it, whatever
 * {@code share.version} says; only callers with CLUSTER_ACTION on the cluster may send it (the registry wraps this
 * handler in {@link ClusterAuthorizedHandler}). A whole-request failure gives every partition of the request the
 * error and its default message. Immutable, thread-safe.
 */
public final class ReadShareGroupStateHandler
        implements ApiHandler<ReadShareGroupStateRequestData, ReadShareGroupStateResponseData> {

    private final ShareCoordinator coordinator;

    public ReadShareGroupStateHandler(ShareCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.READ_SHARE_GROUP_STATE;
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
    public CompletionStage<ReadShareGroupStateResponseData> handle(RequestContext ctx,
                                                      ReadShareGroupStateRequestData request) {
        return coordinator.readState(request);
    }

    @Override
    public ReadShareGroupStateResponseData errorResponse(RequestContext ctx,
                                            ReadShareGroupStateRequestData request, Errors error) {
        List<ReadShareGroupStateResponseData.ReadStateResult> results = new ArrayList<>();
        for (ReadShareGroupStateRequestData.ReadStateData topic : request.topics()) {
            List<ReadShareGroupStateResponseData.PartitionResult> partitions = new ArrayList<>();
            topic.partitions().forEach(p -> partitions.add(new ReadShareGroupStateResponseData.PartitionResult()
                .setPartition(p.partition()).setErrorCode(error.code()).setErrorMessage(error.message())));
            results.add(new ReadShareGroupStateResponseData.ReadStateResult().setTopicId(topic.topicId())
                .setPartitions(partitions));
        }
        return new ReadShareGroupStateResponseData().setResults(results);
    }

    @Override
    public void countErrors(ReadShareGroupStateResponseData response, ErrorCounter counter) {
        response.results().forEach(topic -> topic.partitions().forEach(p -> counter.count(p.errorCode())));
    }
}
