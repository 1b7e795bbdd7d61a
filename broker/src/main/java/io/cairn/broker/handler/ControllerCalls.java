package io.cairn.broker.handler;

import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.controller.ForwardedRequest;
import io.cairn.wire.error.Errors;
import io.cairn.wire.protocol.ApiMessage;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The shared handling of requests a handler sends to the controller: the request's own timeout, and the error a
 * whole failed call maps to (REQUEST_TIMED_OUT on timeout, else the carried error). Stateless, thread-safe.
 */
final class ControllerCalls {

    private static final Logger LOGGER = LogManager.getLogger(ControllerCalls.class);

    /** How long a forwarded request without a timeout of its own waits for the controller. */
    static final int FORWARD_TIMEOUT_MS = 30_000;

    private ControllerCalls() {
    }

    /** {@code call}, failing with a {@link TimeoutException} after {@code timeoutMs} when that is positive. */
    static <T> CompletableFuture<T> withTimeout(CompletableFuture<T> call, int timeoutMs) {
        return timeoutMs > 0 ? call.orTimeout(timeoutMs, TimeUnit.MILLISECONDS) : call;
    }

    /**
     * {@code request} sent to the active controller in an envelope naming its client (principal, client id and the
     * version it was sent at), as Kafka's broker forwards it: the controller counts topic mutations against the
     * client's controller mutation quota (KIP-599). The response comes back with the controller's throttle time.
     */
    static <R extends ApiMessage> CompletableFuture<R> forward(MetadataNode metadata, RequestContext ctx,
                                                              ApiMessage request, Class<R> responseType,
                                                              int timeoutMs) {
        return withTimeout(metadata.submit(ForwardedRequest.wrap(request, ctx.apiVersion(), ctx.clientId(),
                ctx.connection().principal().toString())).thenApply(responseType::cast), timeoutMs);
    }

    /**
     * {@code request}, which the broker makes on behalf of the client of {@code ctx} (Metadata's topic
     * auto-creation), sent to the active controller in an envelope naming that client at the request's highest
     * version, as Kafka's {@code AutoTopicCreationManager} forwards it with the client's request context: the
     * controller checks and counts it as the client's own (strict quota).
     */
    static <R extends ApiMessage> CompletableFuture<R> forwardForClient(MetadataNode metadata, RequestContext ctx,
                                                                       ApiMessage request, Class<R> responseType) {
        return metadata.submit(ForwardedRequest.wrap(request, request.highestSupportedVersion(), ctx.clientId(),
                ctx.connection().principal().toString())).thenApply(responseType::cast);
    }

    /** The error code of a failed controller call. */
    static Errors error(Throwable failure, String api) {
        Throwable cause = failure;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException)
                && cause.getCause() != null) {
            cause = cause.getCause();
        }
        Errors error = cause instanceof TimeoutException ? Errors.REQUEST_TIMED_OUT : Errors.forException(cause);
        LOGGER.debug("{} failed as a whole with {}: {}", api, error, cause.toString());
        return error;
    }
}
