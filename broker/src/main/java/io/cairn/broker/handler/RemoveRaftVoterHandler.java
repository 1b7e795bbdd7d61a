package io.cairn.broker.handler;

import io.cairn.metadata.MetadataNode;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.RemoveRaftVoterRequestData;
import io.cairn.wire.message.RemoveRaftVoterResponseData;
import java.util.concurrent.CompletionStage;

/**
 * RemoveRaftVoter v0 (KIP-853; {@code kafka-metadata-quorum remove-controller}, {@code Admin.removeRaftVoter}):
 * forwarded to the active controller, as Kafka's broker forwards it. The controller checks the request as Kafka's
 * Raft leader (INCONSISTENT_CLUSTER_ID, INVALID_REQUEST for a voter without a directory id, REQUEST_TIMED_OUT while
 * another voter change is in progress, UNSUPPORTED_VERSION when kraft.version is 0, VOTER_NOT_FOUND for a voter key
 * that is not in the set or the last voter) and answers once the voter set without it is committed; a removed leader
 * then steps down. A controller that does not answer within 30 s gives REQUEST_TIMED_OUT. The cluster authorization
 * (ALTER) is checked by the {@link ClusterAuthorizedHandler} around it. Immutable, thread-safe, never blocks.
 */
public final class RemoveRaftVoterHandler
        implements ApiHandler<RemoveRaftVoterRequestData, RemoveRaftVoterResponseData> {

    private final MetadataNode metadata;

    public RemoveRaftVoterHandler(MetadataNode metadata) {
        this.metadata = metadata;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.REMOVE_RAFT_VOTER;
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
    public CompletionStage<RemoveRaftVoterResponseData> handle(RequestContext ctx,
                                                               RemoveRaftVoterRequestData request) {
        return ControllerCalls.withTimeout(metadata.removeRaftVoter(request), ControllerCalls.FORWARD_TIMEOUT_MS)
                .handle((answer, failure) -> failure != null
                        ? errorResponse(ctx, request, ControllerCalls.error(failure, "RemoveRaftVoter"))
                        : answer.setThrottleTimeMs(0));
    }

    /** Kafka's {@code RemoveRaftVoterRequest.getErrorResponse}: the code and its message. */
    @Override
    public RemoveRaftVoterResponseData errorResponse(RequestContext ctx, RemoveRaftVoterRequestData request,
                                                     Errors error) {
        return new RemoveRaftVoterResponseData().setErrorCode(error.code()).setErrorMessage(error.message());
    }

    @Override
    public void countErrors(RemoveRaftVoterResponseData response, ErrorCounter counter) {
        counter.count(response.errorCode());
    }
}
