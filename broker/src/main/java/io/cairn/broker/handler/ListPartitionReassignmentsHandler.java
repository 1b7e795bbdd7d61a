package io.cairn.broker.handler;

import io.cairn.metadata.MetadataNode;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ListPartitionReassignmentsRequestData;
import io.cairn.wire.message.ListPartitionReassignmentsRequestData.ListPartitionReassignmentsTopics;
import io.cairn.wire.message.ListPartitionReassignmentsResponseData;
import io.cairn.wire.message.ListPartitionReassignmentsResponseData.OngoingPartitionReassignment;
import io.cairn.wire.message.ListPartitionReassignmentsResponseData.OngoingTopicReassignment;
import java.util.concurrent.CompletionStage;

/**
 * ListPartitionReassignments v0 ({@code kafka-reassign-partitions --verify/--list},
 * {@code Admin.listPartitionReassignments}): forwarded to the active controller, which lists the ongoing
 * reassignments (replicas, adding, removing) of every topic (topics null) or of the named partitions, from its
 * committed image; unknown topics and partitions and those not being reassigned are left out. A controller that does
 * not answer within {@code timeoutMs} gives REQUEST_TIMED_OUT. Immutable, thread-safe, never blocks.
 */
public final class ListPartitionReassignmentsHandler
        implements ApiHandler<ListPartitionReassignmentsRequestData, ListPartitionReassignmentsResponseData> {

    private final MetadataNode metadata;

    public ListPartitionReassignmentsHandler(MetadataNode metadata) {
        this.metadata = metadata;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.LIST_PARTITION_REASSIGNMENTS;
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
    public CompletionStage<ListPartitionReassignmentsResponseData> handle(RequestContext ctx,
            ListPartitionReassignmentsRequestData request) {
        return ControllerCalls.withTimeout(metadata.submit(request), request.timeoutMs())
                .handle((answer, failure) -> failure != null
                        ? errorResponse(ctx, request, ControllerCalls.error(failure, "ListPartitionReassignments"))
                        : ((ListPartitionReassignmentsResponseData) answer).setThrottleTimeMs(0));
    }

    /** Kafka's ListPartitionReassignmentsRequest.getErrorResponse: the error, and each named partition bare. */
    @Override
    public ListPartitionReassignmentsResponseData errorResponse(RequestContext ctx,
            ListPartitionReassignmentsRequestData request, Errors error) {
        ListPartitionReassignmentsResponseData response = new ListPartitionReassignmentsResponseData()
                .setThrottleTimeMs(0).setErrorCode(error.code()).setErrorMessage(error.message());
        if (request.topics() != null) {
            for (ListPartitionReassignmentsTopics topic : request.topics()) {
                OngoingTopicReassignment result = new OngoingTopicReassignment().setName(topic.name());
                topic.partitionIndexes().forEach(index -> result.partitions()
                        .add(new OngoingPartitionReassignment().setPartitionIndex(index)));
                response.topics().add(result);
            }
        }
        return response;
    }
}
