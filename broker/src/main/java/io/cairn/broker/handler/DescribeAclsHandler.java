package io.cairn.broker.handler;

import io.cairn.metadata.image.AclEntry;
import io.cairn.metadata.image.AclFilter;
import io.cairn.metadata.image.AclOperation;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.DescribeAclsRequestData;
import io.cairn.wire.message.DescribeAclsResponseData;
import io.cairn.wire.message.DescribeAclsResponseData.AclDescription;
import io.cairn.wire.message.DescribeAclsResponseData.DescribeAclsResource;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * DescribeAcls v1-3 ({@code kafka-acls --list}, {@code Admin.describeAcls}) as Kafka's {@code AclApis} serves it:
 * DESCRIBE on the cluster is required (else CLUSTER_AUTHORIZATION_FAILED), SECURITY_DISABLED without an authorizer,
 * else the ACLs of the broker's metadata image that match the filter, grouped by resource pattern. Immutable,
 * thread-safe, answers from memory.
 */
public final class DescribeAclsHandler implements ApiHandler<DescribeAclsRequestData, DescribeAclsResponseData> {

    @Override
    public ApiKey apiKey() {
        return ApiKey.DESCRIBE_ACLS;
    }

    @Override
    public short minVersion() {
        return ApiKey.DESCRIBE_ACLS.lowestSupportedVersion();
    }

    @Override
    public short maxVersion() {
        return 3;
    }

    @Override
    public CompletionStage<DescribeAclsResponseData> handle(RequestContext ctx, DescribeAclsRequestData request) {
        if (!ctx.authorizeCluster(AclOperation.DESCRIBE)) {
            return CompletableFuture.completedFuture(error(Errors.CLUSTER_AUTHORIZATION_FAILED,
                    AclRequests.NOT_AUTHORIZED));
        }
        if (!ctx.authorizer().enabled()) {
            return CompletableFuture.completedFuture(error(Errors.SECURITY_DISABLED,
                    AclRequests.NO_AUTHORIZER_ON_BROKER));
        }
        if (AclRequests.hasUnknown(request.resourceTypeFilter(), request.patternTypeFilter(), request.operation(),
                request.permissionType())) {
            return CompletableFuture.completedFuture(error(Errors.INVALID_REQUEST,
                    AclRequests.unknownMessage("DescribeAclsRequest filters")));
        }
        AclFilter filter = new AclFilter(request.resourceTypeFilter(), request.resourceNameFilter(),
                request.patternTypeFilter(), request.principalFilter(), request.hostFilter(), request.operation(),
                request.permissionType());
        return CompletableFuture.completedFuture(new DescribeAclsResponseData()
                .setResources(resources(ctx.authorizer().acls(), filter)));
    }

    /** Kafka's {@code DescribeAclsResponse.aclsResources}: one resource per pattern, its matching entries within. */
    static List<DescribeAclsResource> resources(List<AclEntry> acls, AclFilter filter) {
        Map<List<Object>, DescribeAclsResource> byPattern = new LinkedHashMap<>();
        for (AclEntry acl : acls) {
            if (!filter.matches(acl)) {
                continue;
            }
            DescribeAclsResource resource = byPattern.computeIfAbsent(
                    List.of(acl.resourceType(), acl.resourceName(), acl.patternType()),
                    key -> new DescribeAclsResource().setResourceType(acl.resourceType())
                            .setResourceName(acl.resourceName()).setPatternType(acl.patternType()));
            resource.acls().add(new AclDescription().setPrincipal(acl.principal()).setHost(acl.host())
                    .setOperation(acl.operation()).setPermissionType(acl.permissionType()));
        }
        return new ArrayList<>(byPattern.values());
    }

    private static DescribeAclsResponseData error(Errors error, String message) {
        return new DescribeAclsResponseData().setErrorCode(error.code()).setErrorMessage(message);
    }

    @Override
    public DescribeAclsResponseData errorResponse(RequestContext ctx, DescribeAclsRequestData request,
                                                  Errors error) {
        return error(error, null);
    }

    @Override
    public void countErrors(DescribeAclsResponseData response, ErrorCounter counter) {
        counter.count(response.errorCode());
    }
}
