package io.cairn.broker.handler;

import io.cairn.broker.share.ShareCoordinator;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ReadShareGroupStateSummaryRequestData;
import io.cairn.wire.message.ReadShareGroupStateSummaryResponseData;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * ReadShareGroupStateSummary v0 (KIP-932), the start offsets and
 * epochs of share-partitions, served by the {@link ShareCoordinator} as Kafka 4.1 serves it, whatever
 * {@code share.version} says; only callers with CLUSTER_ACTION on the cluster may send it (the registry wraps this
 * handler in {@link ClusterAuthorizedHandler}). A whole-request failure gives every partition of the request the
 * error and its default message. Immutable, thread-safe.
 */
public final class ReadShareGroupStateSummaryHandler
        implements ApiHandler<ReadShareGroupStateSummaryRequestData, ReadShareGroupStateSummaryResponseData> {

    private final ShareCoordinator coordinator;

    public ReadShareGroupStateSummaryHandler(ShareCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.READ_SHARE_GROUP_STATE_SUMMARY;
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
    public CompletionStage<ReadShareGroupStateSummaryResponseData> handle(RequestContext ctx,
                                                      ReadShareGroupStateSummaryRequestData request) {
        return coordinator.readStateSummary(request);
    }

    @Override
    public ReadShareGroupStateSummaryResponseData errorResponse(RequestContext ctx,
                                            ReadShareGroupStateSummaryRequestData request, Errors error) {
        List<ReadShareGroupStateSummaryResponseData.ReadStateSummaryResult> results = new ArrayList<>();
        for (ReadShareGroupStateSummaryRequestData.ReadStateSummaryData topic : request.topics()) {
            List<ReadShareGroupStateSummaryResponseData.PartitionResult> partitions = new ArrayList<>();
            topic.partitions().forEach(p -> partitions.add(new ReadShareGroupStateSummaryResponseData.PartitionResult()
                .setPartition(p.partition()).setErrorCode(error.code()).setErrorMessage(error.message())));
            results.add(new ReadShareGroupStateSummaryResponseData.ReadStateSummaryResult().setTopicId(topic.topicId())
                .setPartitions(partitions));
        }
        return new ReadShareGroupStateSummaryResponseData().setResults(results);
    }

    @Override
    public void countErrors(ReadShareGroupStateSummaryResponseData response, ErrorCounter counter) {
        response.results().forEach(topic -> topic.partitions().forEach(p -> counter.count(p.errorCode())));
    }
}
