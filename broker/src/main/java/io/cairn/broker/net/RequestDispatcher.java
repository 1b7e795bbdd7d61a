package io.cairn.broker.net;

import io.cairn.broker.handler.ApiHandler;
import io.cairn.broker.handler.ApiHandler.RunsOn;
import io.cairn.broker.handler.ClientConnection;
import io.cairn.broker.handler.RequestContext;
import io.cairn.broker.handler.TwoPhaseApiHandler;
import io.cairn.broker.handler.TwoPhaseApiHandler.Stages;
import io.cairn.broker.metrics.ApiRequestMetrics;
import io.cairn.broker.quota.RequestQuotas;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.protocol.ApiMessage;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.timeout.IdleStateEvent;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Runs the requests of one connection: decodes each frame, calls its handler, maps failures to error responses
 * and hands the responses, tagged with the request's position, to the {@link ResponseOrderer}.
 *
 * <p>Request N+1 is dispatched only after request N's handler stage has completed (STYLE §3, Redpanda's rule: it
 * keeps the requests of one connection, e.g. idempotent produces, in order); frames that arrive meanwhile wait in a
 * queue and the channel stops reading until the queue drains. Requests the broker will not serve close the
 * connection with one WARN line, as Kafka closes it.
 *
 * <p>A handler runs where it declares ({@link ApiHandler#runsOn()}): on this event loop, or handed to the
 * request-handler threads (Kafka's {@code RequestChannel} between its processors and handlers), so that a request
 * waiting for a partition's lock or the disk holds up its own connection only. One instance per connection; every
 * method runs on the channel's event loop (handler completions are moved there).
 *
 * <p>On a SASL listener it also keeps the connection's {@link SaslSession} (KIP-368): a request that comes after the
 * session expired closes the connection unanswered, and the requests of a re-authentication are answered by the
 * session in their place in the connection's order (later requests wait until the exchange completes).
 *
 * <p>It also records the request metrics: the count and outcome of each request, its phase timings
 * ({@link RequestTimes}, recorded once its response is written) and the connection's opening and closing.
 */
final class RequestDispatcher extends ChannelInboundHandlerAdapter {

    private static final Logger LOGGER = LogManager.getLogger(RequestDispatcher.class);

    private final RequestDecoder decoder;
    private final RequestMemoryPool memoryPool;
    private final Executor requestHandlers;
    private final String listenerName;
    private final Function<ChannelHandlerContext, ClientConnection> connectionFactory;
    private final DispatcherMetrics metrics;
    /** The connection's SASL session on a SASL listener, else null. */
    private final SaslSession saslSession;
    private final ArrayDeque<ByteBuf> queued = new ArrayDeque<>();
    private ChannelHandlerContext ctx;
    private ClientConnection connection;
    private long nextSequence;
    /** True while a request's handler stage has not completed; the next request waits. */
    private boolean dispatching;
    /** True while {@link #drain()} runs, so that completions on the same stack do not recurse into it. */
    private boolean draining;
    /** Set when the connection is being closed: nothing more is dispatched. */
    private boolean closing;
    /** When the client's quota throttle ends (the metrics clock's nanoseconds), 0 when it is not throttled. */
    private long throttledUntilNanos;

    RequestDispatcher(RequestDecoder decoder, RequestMemoryPool memoryPool, Executor requestHandlers,
            String listenerName, Function<ChannelHandlerContext, ClientConnection> connectionFactory,
            DispatcherMetrics metrics) {
        this(decoder, memoryPool, requestHandlers, listenerName, connectionFactory, metrics, null);
    }

    /** @param saslSession the connection's SASL session on a SASL listener, else null */
    RequestDispatcher(RequestDecoder decoder, RequestMemoryPool memoryPool, Executor requestHandlers,
            String listenerName, Function<ChannelHandlerContext, ClientConnection> connectionFactory,
            DispatcherMetrics metrics, SaslSession saslSession) {
        this.saslSession = saslSession;
        this.decoder = decoder;
        this.memoryPool = memoryPool;
        this.requestHandlers = requestHandlers;
        this.listenerName = listenerName;
        this.connectionFactory = connectionFactory;
        this.metrics = metrics;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        connection = connectionFactory.apply(ctx);
        metrics.connections().connectionOpened();
        LOGGER.debug("Accepted connection {}", connection);
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf)) {
            ctx.fireChannelRead(msg);
            return;
        }
        ByteBuf frame = (ByteBuf) msg;
        if (closing) {
            // The frame decoder reserved the frame's size from the pool; a frame never dispatched returns it here.
            memoryPool.release(frame.readableBytes());
            frame.release();
            return;
        }
        queued.add(frame);
        drain();
    }

    private void drain() {
        draining = true;
        try {
            ByteBuf frame;
            while (!dispatching && !closing && (frame = queued.poll()) != null) {
                dispatch(frame);
            }
        } finally {
            draining = false;
        }
        updateAutoRead();
    }

    private void dispatch(ByteBuf frame) {
        int reservedBytes = frame.readableBytes();
        SaslSession.Route route = saslSession == null || reservedBytes < 2 ? SaslSession.Route.NORMAL
                : saslSession.route(frame.getShort(frame.readerIndex()));
        if (route == SaslSession.Route.EXPIRED) {
            short apiKey = frame.getShort(frame.readerIndex());
            memoryPool.release(reservedBytes);
            frame.release();
            closeExpired(apiKey);
            return;
        }
        DecodedRequest request;
        try {
            request = decoder.decode(frame);
        } catch (InvalidRequestException e) {
            memoryPool.release(reservedBytes);
            closeConnection(e.getMessage());
            return;
        } finally {
            frame.release();
        }
        long sequence = nextSequence++;
        if (route == SaslSession.Route.REAUTHENTICATE) {
            memoryPool.release(reservedBytes);
            reauthenticate(sequence, request);
            return;
        }
        ApiRequestMetrics apiMetrics = metrics.requests().forApi(request.apiKey());
        if (request.unsupportedApiVersions()) {
            apiMetrics.recordRequest(request.apiVersion());
            apiMetrics.recordError(Errors.UNSUPPORTED_VERSION);
            memoryPool.release(reservedBytes);
            // KIP-511: a v0 body behind a v0 header, so that a client of any version can read it and retry.
            write(new ResponseFrame(sequence, request.header().correlationId(), (short) 0, (short) 0,
                    decoder.registry().unsupportedApiVersionsResponse()));
            return;
        }
        RequestContext context = new RequestContext(request.header(), request.apiKey(), connection,
                decoder.registry().authorizer());
        RequestTimes times = new RequestTimes(metrics.time(), apiMetrics,
                metrics.requests().fetchSplit(request.apiKey(), request.apiVersion(), request.body()), reservedBytes);
        times.recordRequest(request.apiVersion());
        if (RequestTimes.REQUEST_LOGGER.isDebugEnabled()) {
            times.describe(describe(request, connection));
        }
        if (LOGGER.isDebugEnabled()) {
            LOGGER.debug("Request {} v{} correlation id {} from {}: {}", request.apiKey().messageName(),
                    request.apiVersion(), request.header().correlationId(), connection, request.body());
        }
        Stages<ApiMessage> stages;
        if (request.handler().runsOn() == RunsOn.NETWORK_THREAD) {
            stages = start(request, context);
            times.localDone();
        } else {
            stages = startOnRequestHandler(request, context, times);
            if (stages == null) {
                memoryPool.release(reservedBytes);
                return;
            }
        }
        dispatching = true;
        stages.response().whenComplete((response, error) -> {
            times.responseDone();
            onEventLoop(() -> onResponse(sequence, context, request, response, error, times, reservedBytes),
                    () -> releaseResponse(request, response));
        });
        stages.dispatched().whenComplete((ignored, error) -> onEventLoop(() -> onDispatched(reservedBytes),
                () -> memoryPool.release(reservedBytes)));
    }

    /**
     * Closes a connection whose SASL session expired before this request (Kafka's {@code SocketServer} closes it
     * and counts it in {@code expired-connections-killed-count}); one INFO line.
     */
    private void closeExpired(short apiKey) {
        closing = true;
        metrics.connections().expiredConnectionKilled();
        ApiKey key = ApiKey.forId(apiKey);
        LOGGER.info("Closing connection from {} (principal {}, client {}) on listener {}: its SASL session expired "
                + "(connections.max.reauth.ms) and it sent {} instead of re-authenticating", remote(),
                connection.principal(), connection.clientSoftware(), listenerName,
                key == null ? "api key " + apiKey : key.messageName());
        releaseQueued();
        ctx.close();
    }

    /**
     * Hands a request of a re-authentication to the SASL session; nothing else is dispatched until its reply is
     * written, in this request's place in the response order.
     */
    private void reauthenticate(long sequence, DecodedRequest request) {
        RequestContext context = new RequestContext(request.header(), request.apiKey(), connection,
                decoder.registry().authorizer());
        CompletableFuture<SaslSession.Reply> reply;
        try {
            reply = saslSession.reauthenticate(request, context, ctx.executor());
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        dispatching = true;
        reply.whenComplete((answer, error) -> onEventLoop(() -> onReauthenticated(sequence, request, answer, error),
                () -> { }));
    }

    private void onReauthenticated(long sequence, DecodedRequest request, SaslSession.Reply reply, Throwable error) {
        if (closing) {
            return;
        }
        if (error != null) {
            closeConnection("SASL re-authentication failed: " + describe(error));
            return;
        }
        ResponseFrame frame = reply.body() == null ? ResponseFrame.none(sequence)
                : new ResponseFrame(sequence, request.header().correlationId(),
                        request.apiKey().responseHeaderVersion(request.apiVersion()), request.apiVersion(),
                        reply.body());
        if (reply.close()) {
            closing = true;
            releaseQueued();
            ctx.writeAndFlush(frame).addListener(ChannelFutureListener.CLOSE);
            updateAutoRead();
            return;
        }
        ctx.writeAndFlush(frame, ctx.voidPromise());
        dispatching = false;
        if (!draining) {
            drain();
        }
    }

    /** The request logger's view of a request: its header, the connection, and at TRACE its body (Kafka's). */
    private static String describe(DecodedRequest request, Object connection) {
        String header = "{api=" + request.apiKey().messageName() + ",version=" + request.apiVersion()
                + ",correlationId=" + request.header().correlationId() + ",clientId=" + request.header().clientId()
                + "} from connection " + connection;
        return RequestTimes.REQUEST_LOGGER.isTraceEnabled() ? header + ",request:" + request.body() : header;
    }

    /** Calls the handler; a handler that throws is treated like one whose stages failed. */
    @SuppressWarnings("unchecked")
    private static Stages<ApiMessage> start(DecodedRequest request, RequestContext context) {
        try {
            if (request.handler() instanceof TwoPhaseApiHandler) {
                return ((TwoPhaseApiHandler<ApiMessage, ApiMessage>) request.handler()).dispatch(context,
                        request.body());
            }
            CompletionStage<ApiMessage> response = request.handler().handle(context, request.body());
            return new Stages<>(response, response);
        } catch (RuntimeException e) {
            CompletableFuture<ApiMessage> failed = CompletableFuture.failedFuture(e);
            return new Stages<>(failed, failed);
        }
    }

    /**
     * Calls the handler on a request-handler thread; the stages complete once the handler's do. Null when the
     * request-handler threads have stopped (the broker is shutting down): the request is dropped with its connection.
     */
    private Stages<ApiMessage> startOnRequestHandler(DecodedRequest request, RequestContext context,
            RequestTimes times) {
        CompletableFuture<Stages<ApiMessage>> started = new CompletableFuture<>();
        try {
            requestHandlers.execute(() -> {
                try {
                    times.dequeued();
                    Stages<ApiMessage> stages = start(request, context);
                    times.localDone();
                    started.complete(stages);
                } catch (Error e) {
                    started.completeExceptionally(e);
                    throw e;
                }
            });
        } catch (RejectedExecutionException e) {
            drop(request, context);
            return null;
        }
        return new Stages<>(started.thenCompose(s -> s.dispatched().thenApply(ignored -> null)),
                started.thenCompose(Stages::response));
    }

    /** Releases what a request that is never handled holds (through its error response) and closes. */
    private void drop(DecodedRequest request, RequestContext context) {
        try {
            releaseResponse(request, request.handler().errorResponse(context, request.body(),
                    Errors.UNKNOWN_SERVER_ERROR));
        } catch (RuntimeException e) {
            LOGGER.debug("Could not release a dropped {} request", request.apiKey().messageName(), e);
        }
        closeConnection("the request-handler threads have stopped (the broker is shutting down)");
    }

    /** Runs {@code task} on the channel's event loop; {@code ifRejected} when the loop has shut down already. */
    private void onEventLoop(Runnable task, Runnable ifRejected) {
        if (ctx.executor().inEventLoop()) {
            task.run();
            return;
        }
        try {
            ctx.executor().execute(task);
        } catch (RejectedExecutionException e) {
            ifRejected.run();
        }
    }

    /** Releases a response that will never be written (the handler's {@code releaseResponse}). */
    @SuppressWarnings("unchecked")
    private static void releaseResponse(DecodedRequest request, ApiMessage response) {
        if (response == null) {
            return;
        }
        try {
            ((ApiHandler<ApiMessage, ApiMessage>) request.handler()).releaseResponse(response);
        } catch (RuntimeException e) {
            LOGGER.error("{} could not release a {} response", request.handler().getClass().getSimpleName(),
                    request.apiKey().messageName(), e);
        }
    }

    private void onDispatched(int reservedBytes) {
        memoryPool.release(reservedBytes);
        dispatching = false;
        if (!draining && !closing) {
            drain();
        }
    }

    private void onResponse(long sequence, RequestContext context, DecodedRequest request, ApiMessage answer,
            Throwable error, RequestTimes times, int requestBytes) {
        times.responseDequeued();
        if (closing) {
            releaseResponse(request, answer);
            return;
        }
        boolean expectsResponse = request.handler().expectsResponse(request.body());
        ApiMessage response = answer;
        if (error == null && answer != null) {
            response = throttle(request, answer, expectsResponse, requestBytes, times);
            countErrors(request, response, times);
            if (!expectsResponse) {
                releaseResponse(request, response);
                times.finishWithoutResponse();
                write(ResponseFrame.none(sequence));
            } else {
                write(responseFrame(sequence, request, response).timed(times));
            }
        } else if (!expectsResponse) {
            times.recordError(error != null ? Errors.forException(error) : Errors.UNKNOWN_SERVER_ERROR);
            closeConnection(request.apiKey().messageName() + " request with correlation id "
                    + request.header().correlationId() + " that expects no response failed: " + describe(error));
        } else {
            ApiMessage errorResponse = errorResponse(context, request, error, times);
            if (errorResponse != null) {
                write(responseFrame(sequence, request, errorResponse).timed(times));
            }
        }
    }

    /**
     * Counts an answered request against its client's quotas ({@link RequestQuotas}): the response to send, with its
     * throttle time; when the client is throttled the connection stops reading for that long once the response is on
     * its way (KIP-219), by the read gate and a task on this event loop, never by waiting.
     */
    private ApiMessage throttle(DecodedRequest request, ApiMessage response, boolean expectsResponse,
            int requestBytes, RequestTimes times) {
        RequestQuotas.Throttled throttled;
        try {
            throttled = decoder.registry().quotas().apply(request.apiKey(), request.apiVersion(),
                    connection.principal().name(), request.header().clientId(), request.body(),
                    expectsResponse ? response : null, requestBytes, times.localTimeNanos());
        } catch (RuntimeException e) {
            LOGGER.error("Client quotas failed on a {} request from {}", request.apiKey().messageName(), connection,
                    e);
            return response;
        }
        if (throttled.response() != response && throttled.response() != null) {
            releaseResponse(request, response);
        }
        if (throttled.throttleTimeMs() > 0) {
            times.throttled(throttled.throttleTimeMs());
            muteFor(throttled.throttleTimeMs());
        }
        return throttled.response() != null ? throttled.response() : response;
    }

    /**
     * Stops reading for {@code throttleMs}, or longer when a throttle already set ends later. One task at a time
     * waits for the end: a throttle that extends the current one only moves the deadline the task checks.
     */
    private void muteFor(int throttleMs) {
        long until = metrics.time().nanoseconds() + TimeUnit.MILLISECONDS.toNanos(throttleMs);
        if (throttledUntilNanos != 0) {
            if (until - throttledUntilNanos > 0) {
                throttledUntilNanos = until;
            }
            return;
        }
        throttledUntilNanos = until;
        ReadGate.of(ctx.channel()).set(ReadGate.THROTTLE, true);
        ctx.executor().schedule(this::unmuteIfDue, throttleMs, TimeUnit.MILLISECONDS);
    }

    /** Reads again once the throttle has ended; checks again at the deadline when it was extended meanwhile. */
    private void unmuteIfDue() {
        if (closing || throttledUntilNanos == 0) {
            return;
        }
        long remaining = throttledUntilNanos - metrics.time().nanoseconds();
        if (remaining > 0) {
            ctx.executor().schedule(this::unmuteIfDue, remaining, TimeUnit.NANOSECONDS);
            return;
        }
        throttledUntilNanos = 0;
        ReadGate.of(ctx.channel()).set(ReadGate.THROTTLE, false);
    }

    @SuppressWarnings("unchecked")
    private static void countErrors(DecodedRequest request, ApiMessage response, RequestTimes times) {
        try {
            ((ApiHandler<ApiMessage, ApiMessage>) request.handler()).countErrors(response, times);
        } catch (RuntimeException e) {
            LOGGER.error("{} could not count the errors of a {} response", request.handler().getClass().getSimpleName(),
                    request.apiKey().messageName(), e);
        }
    }

    private ApiMessage errorResponse(RequestContext context, DecodedRequest request, Throwable error,
            RequestTimes times) {
        Throwable cause = error != null ? error
                : new IllegalStateException(request.handler().getClass().getSimpleName() + " completed with null");
        Errors code = Errors.forException(cause);
        times.recordError(code);
        if (code == Errors.UNKNOWN_SERVER_ERROR) {
            LOGGER.error("Unexpected error handling {} v{} request with correlation id {} from {}",
                    request.apiKey().messageName(), request.apiVersion(), request.header().correlationId(),
                    connection, cause);
        }
        try {
            return request.handler().errorResponse(context, request.body(), code);
        } catch (RuntimeException e) {
            LOGGER.error("Closing connection {}: {} could not build an error response", connection,
                    request.handler().getClass().getSimpleName(), e);
            closing = true;
            ctx.close();
            return null;
        }
    }

    /** The frame of a handler's response; releasing the frame releases the response through its handler. */
    private static ResponseFrame responseFrame(long sequence, DecodedRequest request, ApiMessage body) {
        return new ResponseFrame(sequence, request.header().correlationId(),
                request.apiKey().responseHeaderVersion(request.apiVersion()), request.apiVersion(), body,
                () -> releaseResponse(request, body));
    }

    private void write(ResponseFrame frame) {
        if (frame.times() == null) {
            ctx.writeAndFlush(frame, ctx.voidPromise());
            return;
        }
        // A promise only for timed responses: its completion is the end of the response-send phase.
        ctx.writeAndFlush(frame).addListener(frame.times());
    }

    private static String describe(Throwable error) {
        return error == null ? "no response" : error.getClass().getSimpleName() + ": " + error.getMessage();
    }

    /** Closes the connection with the one WARN line the bad-input rule allows (no stack trace). */
    private void closeConnection(String reason) {
        closing = true;
        LOGGER.warn("Closing connection from {} on listener {}: {}", remote(), listenerName, reason);
        releaseQueued();
        ctx.close();
    }

    private Object remote() {
        return connection != null ? connection.remoteAddress() : ctx.channel().remoteAddress();
    }

    /** Reads from the socket only while requests can be dispatched and responses can be written. */
    private void updateAutoRead() {
        boolean read = !closing && queued.isEmpty() && !dispatching && ctx.channel().isWritable();
        ReadGate.of(ctx.channel()).set(ReadGate.DISPATCHER, !read);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        updateAutoRead();
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof IdleStateEvent) {
            LOGGER.debug("Closing idle connection {} (connections.max.idle.ms)", connection);
            closing = true;
            ctx.close();
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof IOException) {
            LOGGER.debug("Connection {} failed: {}", connection, cause.toString());
        } else if (!closing) {
            LOGGER.warn("Closing connection from {} on listener {}: {}", remote(), listenerName, cause.toString());
            LOGGER.debug("Stack trace of the failure on connection {}", connection, cause);
        }
        closing = true;
        ctx.close();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        closing = true;
        if (connection != null) {
            metrics.connections().connectionClosed();
            try {
                connection.closed();
            } catch (RuntimeException e) {
                LOGGER.warn("A close action of connection {} failed", connection, e);
            }
        }
        releaseQueued();
        LOGGER.debug("Connection {} closed", connection);
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        releaseQueued();
    }

    private void releaseQueued() {
        ByteBuf frame;
        while ((frame = queued.poll()) != null) {
            memoryPool.release(frame.readableBytes());
            frame.release();
        }
    }
}
