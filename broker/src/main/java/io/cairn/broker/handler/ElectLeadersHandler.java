package io.cairn.broker.handler;

import io.cairn.metadata.MetadataNode;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ElectLeadersRequestData;
import io.cairn.wire.message.ElectLeadersResponseData;
import io.cairn.wire.message.ElectLeadersResponseData.PartitionResult;
import io.cairn.wire.message.ElectLeadersResponseData.ReplicaElectionResult;
import java.util.concurrent.CompletionStage;

/**
 * ElectLeaders v0-v2 ({@code kafka-leader-election}, {@code Admin.electLeaders}): forwarded to the active controller
 * as Kafka's broker forwards it. The controller answers per partition NONE, ELECTION_NOT_NEEDED,
 * PREFERRED_LEADER_NOT_AVAILABLE, ELIGIBLE_LEADERS_NOT_AVAILABLE or UNKNOWN_TOPIC_OR_PARTITION with Kafka's
 * messages, and leaves out partitions needing no election when the request names none (null = every partition).
 * A controller that does not answer within {@code timeoutMs} gives REQUEST_TIMED_OUT for every named partition.
 * Immutable, thread-safe, never blocks.
 */
public final class ElectLeadersHandler implements ApiHandler<ElectLeadersRequestData, ElectLeadersResponseData> {

    private final MetadataNode metadata;

    public ElectLeadersHandler(MetadataNode metadata) {
        this.metadata = metadata;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.ELECT_LEADERS;
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
    public CompletionStage<ElectLeadersResponseData> handle(RequestContext ctx, ElectLeadersRequestData request) {
        return ControllerCalls.withTimeout(metadata.submit(request), request.timeoutMs())
                .handle((answer, failure) -> {
                    if (failure != null) {
                        return errorResponse(ctx, request, ControllerCalls.error(failure, "ElectLeaders"));
                    }
                    // Only v1+ can carry the controller's one top-level error (an unknown election type); v0
                    // requests are always PREFERRED.
                    return ((ElectLeadersResponseData) answer).setThrottleTimeMs(0);
                });
    }

    /** Kafka's ElectLeadersRequest.getErrorResponse: every named partition with the error and its message. */
    @Override
    public ElectLeadersResponseData errorResponse(RequestContext ctx, ElectLeadersRequestData request,
                                                  Errors error) {
        ElectLeadersResponseData response = new ElectLeadersResponseData().setThrottleTimeMs(0);
        if (ctx.apiVersion() >= 1) {
            response.setErrorCode(error.code());
        }
        if (request.topicPartitions() != null) {
            for (ElectLeadersRequestData.TopicPartitions topic : request.topicPartitions()) {
                ReplicaElectionResult result = new ReplicaElectionResult().setTopic(topic.topic());
                for (int partition : topic.partitions()) {
                    result.partitionResult().add(new PartitionResult().setPartitionId(partition)
                            .setErrorCode(error.code()).setErrorMessage(error.message()));
                }
                response.replicaElectionResults().add(result);
            }
        }
        return response;
    }
}
