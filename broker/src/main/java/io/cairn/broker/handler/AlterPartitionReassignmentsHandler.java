package io.cairn.broker.handler;

import io.cairn.metadata.MetadataNode;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AlterPartitionReassignmentsRequestData;
import io.cairn.wire.message.AlterPartitionReassignmentsRequestData.ReassignablePartition;
import io.cairn.wire.message.AlterPartitionReassignmentsRequestData.ReassignableTopic;
import io.cairn.wire.message.AlterPartitionReassignmentsResponseData;
import io.cairn.wire.message.AlterPartitionReassignmentsResponseData.ReassignablePartitionResponse;
import io.cairn.wire.message.AlterPartitionReassignmentsResponseData.ReassignableTopicResponse;
import io.cairn.wire.message.ApiKey;
import java.util.concurrent.CompletionStage;

/**
 * AlterPartitionReassignments v0-v1 ({@code kafka-reassign-partitions --execute/--cancel},
 * {@code Admin.alterPartitionReassignments}; v1 carries KIP-860's {@code allowReplicationFactorChange}): forwarded to
 * the active controller, which starts, changes or cancels each partition's reassignment and answers
 * INVALID_REPLICA_ASSIGNMENT, INVALID_REPLICATION_FACTOR, NO_REASSIGNMENT_IN_PROGRESS or UNKNOWN_TOPIC_OR_PARTITION
 * with Kafka's messages. A controller that does not answer within {@code timeoutMs} gives REQUEST_TIMED_OUT.
 * Immutable, thread-safe, never blocks.
 */
public final class AlterPartitionReassignmentsHandler
        implements ApiHandler<AlterPartitionReassignmentsRequestData, AlterPartitionReassignmentsResponseData> {

    private final MetadataNode metadata;

    public AlterPartitionReassignmentsHandler(MetadataNode metadata) {
        this.metadata = metadata;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.ALTER_PARTITION_REASSIGNMENTS;
    }

    @Override
    public short minVersion() {
        return 0;
    }

    @Override
    public short maxVersion() {
        return 1;
    }

    @Override
    public CompletionStage<AlterPartitionReassignmentsResponseData> handle(RequestContext ctx,
            AlterPartitionReassignmentsRequestData request) {
        return ControllerCalls.withTimeout(metadata.submit(request), request.timeoutMs())
                .handle((answer, failure) -> failure != null
                        ? errorResponse(ctx, request, ControllerCalls.error(failure, "AlterPartitionReassignments"))
                        : ((AlterPartitionReassignmentsResponseData) answer).setThrottleTimeMs(0));
    }

    /** Kafka's AlterPartitionReassignmentsRequest.getErrorResponse: the error on top and on every partition. */
    @Override
    public AlterPartitionReassignmentsResponseData errorResponse(RequestContext ctx,
            AlterPartitionReassignmentsRequestData request, Errors error) {
        AlterPartitionReassignmentsResponseData response = new AlterPartitionReassignmentsResponseData()
                .setThrottleTimeMs(0).setErrorCode(error.code()).setErrorMessage(error.message());
        for (ReassignableTopic topic : request.topics()) {
            ReassignableTopicResponse result = new ReassignableTopicResponse().setName(topic.name());
            for (ReassignablePartition partition : topic.partitions()) {
                result.partitions().add(new ReassignablePartitionResponse()
                        .setPartitionIndex(partition.partitionIndex()).setErrorCode(error.code())
                        .setErrorMessage(error.message()));
            }
            response.responses().add(result);
        }
        return response;
    }
}
