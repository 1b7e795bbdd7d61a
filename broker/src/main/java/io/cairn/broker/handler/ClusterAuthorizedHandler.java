package io.cairn.broker.handler;

import io.cairn.metadata.image.AclOperation;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.protocol.ApiMessage;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * An API that Kafka serves only to callers with one operation on the cluster ({@code authorizeClusterOperation} in
 * {@code KafkaApis}/{@code ControllerApis}): without it the request fails as a whole with
 * CLUSTER_AUTHORIZATION_FAILED in the API's own error response; with it (or without an authorizer) the wrapped
 * handler serves it. Immutable and thread-safe as its delegate.
 *
 * @param <Q> the request body type
 * @param <S> the response body type
 */
public final class ClusterAuthorizedHandler<Q extends ApiMessage, S extends ApiMessage>
        implements ApiHandler<Q, S>, AutoCloseable {

    private final ApiHandler<Q, S> delegate;
    private final AclOperation operation;

    private ClusterAuthorizedHandler(ApiHandler<Q, S> delegate, AclOperation operation) {
        this.delegate = delegate;
        this.operation = operation;
    }

    /** {@code delegate}, served only to callers with {@code operation} on the cluster. */
    public static <Q extends ApiMessage, S extends ApiMessage> ApiHandler<Q, S> requiring(AclOperation operation,
                                                                                        ApiHandler<Q, S> delegate) {
        return new ClusterAuthorizedHandler<>(delegate, operation);
    }

    @Override
    public ApiKey apiKey() {
        return delegate.apiKey();
    }

    @Override
    public short minVersion() {
        return delegate.minVersion();
    }

    @Override
    public short maxVersion() {
        return delegate.maxVersion();
    }

    @Override
    public short advertisedMinVersion() {
        return delegate.advertisedMinVersion();
    }

    @Override
    public RunsOn runsOn() {
        return delegate.runsOn();
    }

    @Override
    public CompletionStage<S> handle(RequestContext ctx, Q request) {
        if (!ctx.authorizeCluster(operation)) {
            return CompletableFuture.completedFuture(delegate.errorResponse(ctx, request,
                    Errors.CLUSTER_AUTHORIZATION_FAILED));
        }
        return delegate.handle(ctx, request);
    }

    @Override
    public S errorResponse(RequestContext ctx, Q request, Errors error) {
        return delegate.errorResponse(ctx, request, error);
    }

    @Override
    public boolean expectsResponse(Q request) {
        return delegate.expectsResponse(request);
    }

    @Override
    public void countErrors(S response, ErrorCounter counter) {
        delegate.countErrors(response, counter);
    }

    @Override
    public void releaseResponse(S response) {
        delegate.releaseResponse(response);
    }

    @Override
    public void close() throws Exception {
        if (delegate instanceof AutoCloseable) {
            ((AutoCloseable) delegate).close();
        }
    }
}
