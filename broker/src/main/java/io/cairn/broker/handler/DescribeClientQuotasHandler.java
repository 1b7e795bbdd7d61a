package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;

import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.controller.ClientQuotaCommands;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.DescribeClientQuotasRequestData;
import io.cairn.wire.message.DescribeClientQuotasResponseData;
import java.util.concurrent.CompletionStage;

/**
 * DescribeClientQuotas v0-1 ({@code kafka-configs --describe --entity-type users|clients|ips},
 * {@code Admin.describeClientQuotas}): answered by this broker from its metadata image, as a KRaft broker answers
 * it from its metadata cache ({@link ClientQuotaCommands#describe}): the entities the filter matches with their
 * quota keys and values, or Kafka's whole-request error for a bad filter. Needs DESCRIBE_CONFIGS on the cluster when
 * an authorizer is configured (registered through {@link ClusterAuthorizedHandler}). Stateless, thread-safe, answers
 * from memory on the network thread.
 */
public final class DescribeClientQuotasHandler
        implements ApiHandler<DescribeClientQuotasRequestData, DescribeClientQuotasResponseData> {

    private final MetadataNode metadata;

    public DescribeClientQuotasHandler(MetadataNode metadata) {
        this.metadata = metadata;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.DESCRIBE_CLIENT_QUOTAS;
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
    public RunsOn runsOn() {
        return RunsOn.NETWORK_THREAD;
    }

    @Override
    public CompletionStage<DescribeClientQuotasResponseData> handle(RequestContext ctx,
            DescribeClientQuotasRequestData request) {
        return completedFuture(ClientQuotaCommands.describe(metadata.currentImage(), request).setThrottleTimeMs(0));
    }

    /** Kafka's DescribeClientQuotasRequest.getErrorResponse: the error and its message, no entries. */
    @Override
    public DescribeClientQuotasResponseData errorResponse(RequestContext ctx, DescribeClientQuotasRequestData request,
                                                          Errors error) {
        return ClientQuotaCommands.describeError(error, error.message()).setThrottleTimeMs(0);
    }

    @Override
    public void countErrors(DescribeClientQuotasResponseData response, ErrorCounter counter) {
        counter.count(response.errorCode());
    }
}
