package io.cairn.broker.handler;

import io.cairn.broker.share.ShareCoordinator;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.InitializeShareGroupStateRequestData;
import io.cairn.wire.message.InitializeShareGroupStateResponseData;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * InitializeShareGroupState v0 (KIP-932), the group coordinator's
 * initialization of share-partitions' state, served by the {@link ShareCoordinator} as Kafka 4.1 serves it, whatever
 * {@code share.version} says; only callers with CLUSTER_ACTION on the cluster may send it (the registry wraps this
 * handler in {@link ClusterAuthorizedHandler}). A whole-request failure gives every partition of the request the
 * error and its default message. Immutable, thread-safe.
 */
public final class InitializeShareGroupStateHandler
        implements ApiHandler<InitializeShareGroupStateRequestData, InitializeShareGroupStateResponseData> {

    private final ShareCoordinator coordinator;

    public InitializeShareGroupStateHandler(ShareCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.INITIALIZE_SHARE_GROUP_STATE;
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
    public CompletionStage<InitializeShareGroupStateResponseData> handle(RequestContext ctx,
                                                      InitializeShareGroupStateRequestData request) {
        return coordinator.initializeState(request);
    }

    @Override
    public InitializeShareGroupStateResponseData errorResponse(RequestContext ctx,
                                            InitializeShareGroupStateRequestData request, Errors error) {
        List<InitializeShareGroupStateResponseData.InitializeStateResult> results = new ArrayList<>();
        for (InitializeShareGroupStateRequestData.InitializeStateData topic : request.topics()) {
            List<InitializeShareGroupStateResponseData.PartitionResult> partitions = new ArrayList<>();
            topic.partitions().forEach(p -> partitions.add(new InitializeShareGroupStateResponseData.PartitionResult()
                .setPartition(p.partition()).setErrorCode(error.code()).setErrorMessage(error.message())));
            results.add(new InitializeShareGroupStateResponseData.InitializeStateResult().setTopicId(topic.topicId())
                .setPartitions(partitions));
        }
        return new InitializeShareGroupStateResponseData().setResults(results);
    }

    @Override
    public void countErrors(InitializeShareGroupStateResponseData response, ErrorCounter counter) {
        response.results().forEach(topic -> topic.partitions().forEach(p -> counter.count(p.errorCode())));
    }
}
