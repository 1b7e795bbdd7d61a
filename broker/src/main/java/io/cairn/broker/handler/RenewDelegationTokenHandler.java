package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;

import io.cairn.metadata.MetadataNode;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.RenewDelegationTokenRequestData;
import io.cairn.wire.message.RenewDelegationTokenResponseData;
import java.util.concurrent.CompletionStage;

/**
 * RenewDelegationToken v1-2 ({@code Admin.renewDelegationToken}, {@code kafka-delegation-tokens --renew}): refused
 * with DELEGATION_TOKEN_REQUEST_NOT_ALLOWED where {@link DelegationTokenRequests#allowed} says so, else forwarded to
 * the active controller with the requester ({@link io.cairn.metadata.controller.DelegationTokenCommands#renew}), as
 * Kafka's {@code KafkaApis.handleRenewTokenRequest}. Stateless, thread-safe.
 */
public final class RenewDelegationTokenHandler
        implements ApiHandler<RenewDelegationTokenRequestData, RenewDelegationTokenResponseData> {

    private final MetadataNode metadata;

    public RenewDelegationTokenHandler(MetadataNode metadata) {
        this.metadata = metadata;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.RENEW_DELEGATION_TOKEN;
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
    public CompletionStage<RenewDelegationTokenResponseData> handle(RequestContext ctx,
            RenewDelegationTokenRequestData request) {
        if (!DelegationTokenRequests.allowed(ctx)) {
            return completedFuture(errorResponse(ctx, request, Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED));
        }
        return DelegationTokenRequests.forward(metadata, ctx, request).handle((answer, failure) -> failure != null
                ? errorResponse(ctx, request, ControllerCalls.error(failure, "RenewDelegationToken"))
                : ((RenewDelegationTokenResponseData) answer).setThrottleTimeMs(0));
    }

    /** The error with Kafka's error timestamp (-1). */
    @Override
    public RenewDelegationTokenResponseData errorResponse(RequestContext ctx,
            RenewDelegationTokenRequestData request, Errors error) {
        return new RenewDelegationTokenResponseData().setErrorCode(error.code()).setThrottleTimeMs(0)
                .setExpiryTimestampMs(DelegationTokenRequests.ERROR_TIMESTAMP);
    }

    @Override
    public void countErrors(RenewDelegationTokenResponseData response, ErrorCounter counter) {
        counter.count(response.errorCode());
    }
}
