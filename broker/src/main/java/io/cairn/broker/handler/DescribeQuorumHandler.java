package io.cairn.broker.handler;

import io.cairn.metadata.MetadataNode;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.DescribeQuorumRequestData;
import io.cairn.wire.message.DescribeQuorumResponseData;
import java.util.concurrent.CompletionStage;

/**
 * DescribeQuorum v0-v2 (KIP-595, KIP-836, KIP-853; {@code kafka-metadata-quorum describe}, and the check by which UIs
 * tell a KRaft cluster): forwarded to the active controller, which answers from its Raft state (leader, epoch, high
 * watermark, voters and observers with their log end offsets and fetch times, and the voters' controller
 * endpoints). A controller that cannot be reached gives the top-level error of the failed call, as Kafka's broker
 * answers a forwarding failure. Immutable, thread-safe, never blocks.
 */
public final class DescribeQuorumHandler
        implements ApiHandler<DescribeQuorumRequestData, DescribeQuorumResponseData> {

    private final MetadataNode metadata;

    public DescribeQuorumHandler(MetadataNode metadata) {
        this.metadata = metadata;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.DESCRIBE_QUORUM;
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
    public CompletionStage<DescribeQuorumResponseData> handle(RequestContext ctx, DescribeQuorumRequestData request) {
        return metadata.describeQuorum(request).handle((answer, failure) -> failure == null
                ? forVersion(answer, ctx.apiVersion())
                : errorResponse(ctx, request, ControllerCalls.error(failure, "DescribeQuorum")));
    }

    /** The controller answers at the latest version; before v2 there are no node endpoints (KIP-853). */
    private static DescribeQuorumResponseData forVersion(DescribeQuorumResponseData answer, short version) {
        if (version < 2) {
            answer.nodes().clear();
        }
        return answer;
    }

    /** Kafka's DescribeQuorumRequest.getErrorResponse: the error at the top level. */
    @Override
    public DescribeQuorumResponseData errorResponse(RequestContext ctx, DescribeQuorumRequestData request,
                                                    Errors error) {
        return new DescribeQuorumResponseData().setErrorCode(error.code()).setErrorMessage(error.message());
    }
}
