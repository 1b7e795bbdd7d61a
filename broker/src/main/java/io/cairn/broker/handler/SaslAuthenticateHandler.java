package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;

import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.SaslAuthenticateRequestData;
import io.cairn.wire.message.SaslAuthenticateResponseData;
import java.util.concurrent.CompletionStage;

/**
 * SaslAuthenticate v0-2 as a request reaching the broker's handlers: the exchange itself is served by the network
 * layer's authenticator on a SASL listener before authentication completes, and during a re-authentication (KIP-368)
 * by the connection's SASL session, so one seen here came outside both (or on a listener without SASL) and is
 * answered ILLEGAL_SASL_STATE with Kafka's message ({@code KafkaApis.handleSaslAuthenticateRequest}). Stateless and
 * thread-safe.
 */
public final class SaslAuthenticateHandler
        implements ApiHandler<SaslAuthenticateRequestData, SaslAuthenticateResponseData> {

    @Override
    public ApiKey apiKey() {
        return ApiKey.SASL_AUTHENTICATE;
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
    public RunsOn runsOn() {
        return RunsOn.NETWORK_THREAD;
    }

    @Override
    public CompletionStage<SaslAuthenticateResponseData> handle(RequestContext ctx,
            SaslAuthenticateRequestData request) {
        return completedFuture(errorResponse(ctx, request, Errors.ILLEGAL_SASL_STATE)
                .setErrorMessage("SaslAuthenticate request received after successful authentication"));
    }

    @Override
    public SaslAuthenticateResponseData errorResponse(RequestContext ctx, SaslAuthenticateRequestData request,
            Errors error) {
        return new SaslAuthenticateResponseData().setErrorCode(error.code()).setAuthBytes(new byte[0]);
    }

    @Override
    public void countErrors(SaslAuthenticateResponseData response, ErrorCounter counter) {
        counter.count(response.errorCode());
    }
}
