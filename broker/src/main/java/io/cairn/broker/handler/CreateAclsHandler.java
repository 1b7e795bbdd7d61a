package io.cairn.broker.handler;

import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclPatternType;
import io.cairn.metadata.image.AclPermissionType;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.CreateAclsRequestData;
import io.cairn.wire.message.CreateAclsRequestData.AclCreation;
import io.cairn.wire.message.CreateAclsResponseData;
import io.cairn.wire.message.CreateAclsResponseData.AclCreationResult;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * CreateAcls v1-3 ({@code kafka-acls --add}, {@code Admin.createAcls}) as Kafka's {@code AclApis} and controller
 * serve it: ALTER on the cluster is required (else CLUSTER_AUTHORIZATION_FAILED for every creation),
 * SECURITY_DISABLED without an authorizer; the creations go to the active controller, which answers INVALID_REQUEST
 * for a CLUSTER resource not named {@code kafka-cluster}, an empty name or a pattern other than LITERAL/PREFIXED,
 * and writes one {@code AccessControlEntryRecord} per new binding. A creation naming ANY as its resource type,
 * pattern type, operation or permission fails the whole request with UNKNOWN_SERVER_ERROR, as Kafka's
 * {@code AclBinding} constructor does. Immutable, thread-safe, never blocks.
 */
public final class CreateAclsHandler implements ApiHandler<CreateAclsRequestData, CreateAclsResponseData> {

    private final MetadataNode metadata;

    public CreateAclsHandler(MetadataNode metadata) {
        this.metadata = metadata;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.CREATE_ACLS;
    }

    @Override
    public short minVersion() {
        return ApiKey.CREATE_ACLS.lowestSupportedVersion();
    }

    @Override
    public short maxVersion() {
        return 3;
    }

    @Override
    public CompletionStage<CreateAclsResponseData> handle(RequestContext ctx, CreateAclsRequestData request) {
        if (!ctx.authorizeCluster(AclOperation.ALTER)) {
            return CompletableFuture.completedFuture(failAll(request, Errors.CLUSTER_AUTHORIZATION_FAILED,
                    AclRequests.NOT_AUTHORIZED));
        }
        if (!ctx.authorizer().enabled()) {
            return CompletableFuture.completedFuture(failAll(request, Errors.SECURITY_DISABLED,
                    AclRequests.NO_AUTHORIZER));
        }
        for (AclCreation creation : request.creations()) {
            if (AclRequests.hasUnknown(creation.resourceType(), creation.resourcePatternType(),
                    creation.operation(), creation.permissionType())) {
                return CompletableFuture.completedFuture(failAll(request, Errors.INVALID_REQUEST,
                        AclRequests.unknownMessage("CreatableAcls")));
            }
            if (AclResourceType.fromCode(creation.resourceType()) == AclResourceType.ANY
                    || AclPatternType.fromCode(creation.resourcePatternType()) == AclPatternType.ANY
                    || AclPatternType.fromCode(creation.resourcePatternType()) == AclPatternType.MATCH
                    || AclOperation.fromCode(creation.operation()) == AclOperation.ANY
                    || AclPermissionType.fromCode(creation.permissionType()) == AclPermissionType.ANY) {
                return CompletableFuture.completedFuture(failAll(request, Errors.UNKNOWN_SERVER_ERROR, null));
            }
        }
        return ControllerCalls.withTimeout(metadata.submit(request), ControllerCalls.FORWARD_TIMEOUT_MS)
                .handle((answer, failure) -> failure != null
                        ? failAll(request, ControllerCalls.error(failure, "CreateAcls"), null)
                        : (CreateAclsResponseData) answer);
    }

    private static CreateAclsResponseData failAll(CreateAclsRequestData request, Errors error, String message) {
        CreateAclsResponseData response = new CreateAclsResponseData();
        for (int i = 0; i < request.creations().size(); i++) {
            response.results().add(new AclCreationResult().setErrorCode(error.code()).setErrorMessage(message));
        }
        return response;
    }

    /** Kafka's {@code CreateAclsRequest.getErrorResponse}: the error on every creation. */
    @Override
    public CreateAclsResponseData errorResponse(RequestContext ctx, CreateAclsRequestData request, Errors error) {
        return failAll(request, error, null);
    }

    @Override
    public void countErrors(CreateAclsResponseData response, ErrorCounter counter) {
        for (AclCreationResult result : response.results()) {
            counter.count(result.errorCode());
        }
    }
}
