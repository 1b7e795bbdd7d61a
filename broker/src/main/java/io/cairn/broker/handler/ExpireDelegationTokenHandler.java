package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;

import io.cairn.metadata.MetadataNode;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ExpireDelegationTokenRequestData;
import io.cairn.wire.message.ExpireDelegationTokenResponseData;
import java.util.concurrent.CompletionStage;

/**
 * ExpireDelegationToken v1-2 ({@code Admin.expireDelegationToken}, {@code kafka-delegation-tokens --expire}): refused
 * with DELEGATION_TOKEN_REQUEST_NOT_ALLOWED where {@link DelegationTokenRequests#allowed} says so, else forwarded to
 * the active controller with the requester ({@link io.cairn.metadata.controller.DelegationTokenCommands#expire}), as
 * Kafka's {@code KafkaApis.handleExpireTokenRequest}. Stateless, thread-safe.
 */
public final class ExpireDelegationTokenHandler
        implements ApiHandler<ExpireDelegationTokenRequestData, ExpireDelegationTokenResponseData> {

    private final MetadataNode metadata;

    public ExpireDelegationTokenHandler(MetadataNode metadata) {
        this.metadata = metadata;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.EXPIRE_DELEGATION_TOKEN;
    }

    @Override
    public short minVersion() {
        return 1;
    }

    @Override
    public short maxVersion() {
        return 2;
    }

    @Override
    public CompletionStage<ExpireDelegationTokenResponseData> handle(RequestContext ctx,
            ExpireDelegationTokenRequestData request) {
        if (!DelegationTokenRequests.allowed(ctx)) {
            return completedFuture(errorResponse(ctx, request, Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED));
        }
        return DelegationTokenRequests.forward(metadata, ctx, request).handle((answer, failure) -> failure != null
                ? errorResponse(ctx, request, ControllerCalls.error(failure, "ExpireDelegationToken"))
                : ((ExpireDelegationTokenResponseData) answer).setThrottleTimeMs(0));
    }

    /** The error with Kafka's error timestamp (-1). */
    @Override
    public ExpireDelegationTokenResponseData errorResponse(RequestContext ctx,
            ExpireDelegationTokenRequestData request, Errors error) {
        return new ExpireDelegationTokenResponseData().setErrorCode(error.code()).setThrottleTimeMs(0)
                .setExpiryTimestampMs(DelegationTokenRequests.ERROR_TIMESTAMP);
    }

    @Override
    public void countErrors(ExpireDelegationTokenResponseData response, ErrorCounter counter) {
        counter.count(response.errorCode());
    }
}
