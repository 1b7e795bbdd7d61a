package io.cairn.broker.handler;

import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.AclOperation;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.DeleteAclsRequestData;
import io.cairn.wire.message.DeleteAclsRequestData.DeleteAclsFilter;
import io.cairn.wire.message.DeleteAclsResponseData;
import io.cairn.wire.message.DeleteAclsResponseData.DeleteAclsFilterResult;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * DeleteAcls v1-3 ({@code kafka-acls --remove}, {@code Admin.deleteAcls}) as Kafka's {@code AclApis} and controller
 * serve it: ALTER on the cluster is required (else CLUSTER_AUTHORIZATION_FAILED for every filter),
 * SECURITY_DISABLED without an authorizer; the filters go to the active controller, which removes every ACL a filter
 * matches ({@code RemoveAccessControlEntryRecord}) and lists them per filter. Immutable, thread-safe, never blocks.
 */
public final class DeleteAclsHandler implements ApiHandler<DeleteAclsRequestData, DeleteAclsResponseData> {

    private final MetadataNode metadata;

    public DeleteAclsHandler(MetadataNode metadata) {
        this.metadata = metadata;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.DELETE_ACLS;
    }

    @Override
    public short minVersion() {
        return ApiKey.DELETE_ACLS.lowestSupportedVersion();
    }

    @Override
    public short maxVersion() {
        return 3;
    }

    @Override
    public CompletionStage<DeleteAclsResponseData> handle(RequestContext ctx, DeleteAclsRequestData request) {
        if (!ctx.authorizeCluster(AclOperation.ALTER)) {
            return CompletableFuture.completedFuture(failAll(request, Errors.CLUSTER_AUTHORIZATION_FAILED,
                    AclRequests.NOT_AUTHORIZED));
        }
        if (!ctx.authorizer().enabled()) {
            return CompletableFuture.completedFuture(failAll(request, Errors.SECURITY_DISABLED,
                    AclRequests.NO_AUTHORIZER));
        }
        for (DeleteAclsFilter filter : request.filters()) {
            if (AclRequests.hasUnknown(filter.resourceTypeFilter(), filter.patternTypeFilter(), filter.operation(),
                    filter.permissionType())) {
                return CompletableFuture.completedFuture(failAll(request, Errors.INVALID_REQUEST,
                        AclRequests.unknownMessage("Filters")));
            }
        }
        return ControllerCalls.withTimeout(metadata.submit(request), ControllerCalls.FORWARD_TIMEOUT_MS)
                .handle((answer, failure) -> failure != null
                        ? failAll(request, ControllerCalls.error(failure, "DeleteAcls"), null)
                        : (DeleteAclsResponseData) answer);
    }

    private static DeleteAclsResponseData failAll(DeleteAclsRequestData request, Errors error, String message) {
        DeleteAclsResponseData response = new DeleteAclsResponseData();
        for (int i = 0; i < request.filters().size(); i++) {
            response.filterResults().add(new DeleteAclsFilterResult().setErrorCode(error.code())
                    .setErrorMessage(message));
        }
        return response;
    }

    /** Kafka's {@code DeleteAclsRequest.getErrorResponse}: the error on every filter. */
    @Override
    public DeleteAclsResponseData errorResponse(RequestContext ctx, DeleteAclsRequestData request, Errors error) {
        return failAll(request, error, null);
    }

    @Override
    public void countErrors(DeleteAclsResponseData response, ErrorCounter counter) {
        for (DeleteAclsFilterResult result : response.filterResults()) {
            counter.count(result.errorCode());
        }
    }
}
