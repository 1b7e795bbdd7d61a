package io.cairn.broker.handler;

import io.cairn.metadata.MetadataNode;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AddRaftVoterRequestData;
import io.cairn.wire.message.AddRaftVoterResponseData;
import io.cairn.wire.message.ApiKey;
import java.util.concurrent.CompletionStage;

/**
 * AddRaftVoter v0 (KIP-853; {@code kafka-metadata-quorum add-controller}, {@code Admin.addRaftVoter}): forwarded to
 * the active controller, as Kafka's broker forwards it. The controller checks the request as Kafka's Raft leader
 * (INCONSISTENT_CLUSTER_ID, INVALID_REQUEST for a voter without a directory id or an endpoint of the controller
 * listener, REQUEST_TIMED_OUT while another voter change is in progress, UNSUPPORTED_VERSION when kraft.version is 0,
 * DUPLICATE_VOTER) and answers once the voter set with the new voter is committed in the metadata quorum. A controller
 * that does not answer within the request's TimeoutMs (at least 30 s) gives REQUEST_TIMED_OUT. The cluster
 * authorization (ALTER) is checked by the {@link ClusterAuthorizedHandler} around it. Immutable, thread-safe, never
 * blocks.
 */
public final class AddRaftVoterHandler implements ApiHandler<AddRaftVoterRequestData, AddRaftVoterResponseData> {

    private final MetadataNode metadata;

    public AddRaftVoterHandler(MetadataNode metadata) {
        this.metadata = metadata;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.ADD_RAFT_VOTER;
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
    public CompletionStage<AddRaftVoterResponseData> handle(RequestContext ctx, AddRaftVoterRequestData request) {
        int timeoutMs = Math.max(ControllerCalls.FORWARD_TIMEOUT_MS, request.timeoutMs());
        return ControllerCalls.withTimeout(metadata.addRaftVoter(request), timeoutMs)
                .handle((answer, failure) -> failure != null
                        ? errorResponse(ctx, request, ControllerCalls.error(failure, "AddRaftVoter"))
                        : answer.setThrottleTimeMs(0));
    }

    /** Kafka's {@code AddRaftVoterRequest.getErrorResponse}: the code and its message. */
    @Override
    public AddRaftVoterResponseData errorResponse(RequestContext ctx, AddRaftVoterRequestData request, Errors error) {
        return new AddRaftVoterResponseData().setErrorCode(error.code()).setErrorMessage(error.message());
    }

    @Override
    public void countErrors(AddRaftVoterResponseData response, ErrorCounter counter) {
        counter.count(response.errorCode());
    }
}
