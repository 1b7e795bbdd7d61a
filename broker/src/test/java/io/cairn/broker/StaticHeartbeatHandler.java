package io.cairn.broker;

import io.cairn.broker.handler.ApiHandler;
import io.cairn.broker.handler.RequestContext;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.HeartbeatRequestData;
import io.cairn.wire.message.HeartbeatResponseData;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A test-only Heartbeat v3-v4 handler that answers NONE, so socket tests can exercise an API with flexible request
 * (v2) and response (v1) headers and the version check of a non-ApiVersions API. Stateless.
 */
final class StaticHeartbeatHandler implements ApiHandler<HeartbeatRequestData, HeartbeatResponseData> {

    @Override
    public ApiKey apiKey() {
        return ApiKey.HEARTBEAT;
    }

    @Override
    public short minVersion() {
        return 3;
    }

    @Override
    public short maxVersion() {
        return 4;
    }

    @Override
    public CompletionStage<HeartbeatResponseData> handle(RequestContext ctx, HeartbeatRequestData request) {
        return CompletableFuture.completedFuture(new HeartbeatResponseData().setErrorCode(Errors.NONE.code()));
    }

    @Override
    public HeartbeatResponseData errorResponse(RequestContext ctx, HeartbeatRequestData request, Errors error) {
        return new HeartbeatResponseData().setErrorCode(error.code());
    }
}
