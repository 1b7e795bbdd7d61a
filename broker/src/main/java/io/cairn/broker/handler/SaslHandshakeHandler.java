package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;

import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.SaslHandshakeRequestData;
import io.cairn.wire.message.SaslHandshakeResponseData;
import java.util.concurrent.CompletionStage;

/**
 * SaslHandshake v0-1 as a request reaching the broker's handlers: on a SASL listener the handshake itself is served
 * by the network layer's authenticator before any request gets here, and one that begins a re-authentication (KIP-368)
 * by the connection's SASL session, so a SaslHandshake seen here came after authentication when no re-authentication
 * may begin ({@code connections.max.reauth.ms} is 0, or the previous one began less than a second ago) or on a
 * listener without SASL, and is answered ILLEGAL_SASL_STATE with no mechanisms, as Kafka's
 * {@code KafkaApis.handleSaslHandshakeRequest} answers it. Stateless and thread-safe.
 */
public final class SaslHandshakeHandler implements ApiHandler<SaslHandshakeRequestData, SaslHandshakeResponseData> {

    @Override
    public ApiKey apiKey() {
        return ApiKey.SASL_HANDSHAKE;
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
    public CompletionStage<SaslHandshakeResponseData> handle(RequestContext ctx, SaslHandshakeRequestData request) {
        return completedFuture(errorResponse(ctx, request, Errors.ILLEGAL_SASL_STATE));
    }

    @Override
    public SaslHandshakeResponseData errorResponse(RequestContext ctx, SaslHandshakeRequestData request,
            Errors error) {
        return new SaslHandshakeResponseData().setErrorCode(error.code());
    }

    @Override
    public void countErrors(SaslHandshakeResponseData response, ErrorCounter counter) {
        counter.count(response.errorCode());
    }
}
