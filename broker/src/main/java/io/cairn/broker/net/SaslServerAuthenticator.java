package io.cairn.broker.net;

import io.cairn.broker.config.SaslSettings;
import io.cairn.broker.handler.ApiHandler;
import io.cairn.broker.handler.ClientConnection;
import io.cairn.broker.handler.RequestContext;
import io.cairn.broker.security.KafkaPrincipal;
import io.cairn.broker.security.SaslAuthenticationException;
import io.cairn.broker.security.SaslServer;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ApiVersionsResponseData;
import io.cairn.wire.message.SaslAuthenticateRequestData;
import io.cairn.wire.message.SaslAuthenticateResponseData;
import io.cairn.wire.message.SaslHandshakeRequestData;
import io.cairn.wire.message.SaslHandshakeResponseData;
import io.cairn.wire.protocol.ApiMessage;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The server side of SASL on one SASL_PLAINTEXT or SASL_SSL connection, following Kafka's
 * {@code SaslServerAuthenticator} state by state, before any request reaches the {@link RequestDispatcher}:
 * <pre>
 *   HANDSHAKE_OR_VERSIONS --ApiVersions--> HANDSHAKE --SaslHandshake v1--> AUTHENTICATE --...--> COMPLETE
 *            \--------------SaslHandshake v0 (raw size-prefixed tokens follow)--> AUTHENTICATE_RAW --^
 * </pre>
 * Only ApiVersions (once) and SaslHandshake are read before the handshake; any other request closes the connection
 * unanswered, and one other than SaslAuthenticate after a v1 handshake is answered ILLEGAL_SASL_STATE, then closed.
 * An unknown mechanism is answered UNSUPPORTED_SASL_MECHANISM with the enabled ones; a failed authentication
 * SASL_AUTHENTICATION_FAILED with the mechanism's message (a v0 client gets no answer). Every failed authentication
 * is answered and closed after {@code connection.failed.authentication.delay.ms}, and logged in one INFO line.
 * Until authentication completes frames are bounded by {@code sasl.server.max.receive.size} (the frame decoder
 * closes the connection on a larger size prefix without reading the body, CVE-2022-34917); on completion the
 * connection's principal becomes {@code User:<name>}, the frame bound goes back to {@code socket.request.max.bytes}
 * and this handler leaves the pipeline, passing on any frame that arrived meanwhile. The connection's
 * {@link SaslSession} starts then: with {@code connections.max.reauth.ms} set for the mechanism the final
 * SaslAuthenticate v1+ response carries the session lifetime, and the session (kept by the {@link RequestDispatcher})
 * expires after it unless the client re-authenticates (KIP-368).
 *
 * <p>A mechanism whose tokens are expensive to evaluate (SCRAM's PBKDF2) is evaluated on the request-handler
 * threads, never on the event loop. One instance per connection; its state is touched on the event loop only.
 */
final class SaslServerAuthenticator extends ChannelInboundHandlerAdapter {

    private static final Logger LOGGER = LogManager.getLogger(SaslServerAuthenticator.class);

    private enum State { HANDSHAKE_OR_VERSIONS, HANDSHAKE, AUTHENTICATE, AUTHENTICATE_RAW, COMPLETE, FAILED }

    private final SaslSettings settings;
    private final RequestDecoder decoder;
    private final ClientConnection connection;
    private final RequestMemoryPool memoryPool;
    private final Executor workers;
    private final RequestFrameDecoder frameDecoder;
    private final int maxRequestBytes;
    private final Function<String, SaslServer> mechanisms;
    private final SaslSession session;
    private final ArrayDeque<ByteBuf> pending = new ArrayDeque<>();
    private State state = State.HANDSHAKE_OR_VERSIONS;
    private SaslServer saslServer;
    /** True while a token is evaluated on a worker or a failure waits out its delay: frames wait in pending. */
    private boolean busy;
    private ChannelHandlerContext ctx;

    /**
     * @param mechanisms creates the server of an enabled mechanism for this connection
     * @param maxRequestBytes {@code socket.request.max.bytes}, restored on the frame decoder once authenticated
     * @param session the connection's session, started when authentication completes
     */
    SaslServerAuthenticator(SaslSettings settings, RequestDecoder decoder, ClientConnection connection,
            RequestMemoryPool memoryPool, Executor workers, RequestFrameDecoder frameDecoder, int maxRequestBytes,
            Function<String, SaslServer> mechanisms, SaslSession session) {
        this.session = session;
        this.settings = settings;
        this.decoder = decoder;
        this.connection = connection;
        this.memoryPool = memoryPool;
        this.workers = workers;
        this.frameDecoder = frameDecoder;
        this.maxRequestBytes = maxRequestBytes;
        this.mechanisms = mechanisms;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf) || state == State.COMPLETE) {
            ctx.fireChannelRead(msg);
            return;
        }
        ByteBuf frame = (ByteBuf) msg;
        if (state == State.FAILED) {
            discard(frame);
            return;
        }
        if (busy) {
            pending.add(frame);
            return;
        }
        handle(frame);
    }

    private void handle(ByteBuf frame) {
        int reservedBytes = frame.readableBytes();
        try {
            if (state == State.AUTHENTICATE_RAW) {
                byte[] token = new byte[frame.readableBytes()];
                frame.readBytes(token);
                evaluate(token, null);
                return;
            }
            DecodedRequest request;
            try {
                request = decoder.decode(frame);
            } catch (InvalidRequestException e) {
                fail("invalid request during SASL " + (state == State.AUTHENTICATE ? "authentication" : "handshake")
                        + ": " + e.getMessage(), null);
                return;
            }
            if (state == State.AUTHENTICATE) {
                onAuthenticate(request);
            } else {
                onHandshakeOrVersions(request);
            }
        } finally {
            memoryPool.release(reservedBytes);
            frame.release();
        }
    }

    private void onHandshakeOrVersions(DecodedRequest request) {
        RequestContext context = new RequestContext(request.header(), request.apiKey(), connection,
                decoder.registry().authorizer());
        if (request.apiKey() == ApiKey.API_VERSIONS) {
            if (state != State.HANDSHAKE_OR_VERSIONS) {
                closeNow("unexpected ApiVersions request received during SASL authentication state " + state);
                return;
            }
            if (request.unsupportedApiVersions()) {
                write(new ResponseFrame(0, request.header().correlationId(), (short) 0, (short) 0,
                        decoder.registry().unsupportedApiVersionsResponse()));
                return;
            }
            ApiMessage response = request.handler().handle(context, request.body()).toCompletableFuture().join();
            write(frameOf(request, response));
            if (((ApiVersionsResponseData) response).errorCode() == Errors.NONE.code()) {
                state = State.HANDSHAKE;
            }
            return;
        }
        if (request.apiKey() != ApiKey.SASL_HANDSHAKE) {
            fail("Unexpected Kafka request of type " + request.apiKey().messageName() + " during SASL handshake.",
                    null);
            return;
        }
        String mechanism = ((SaslHandshakeRequestData) request.body()).mechanism();
        SaslHandshakeResponseData response = new SaslHandshakeResponseData()
                .setMechanisms(new ArrayList<>(settings.enabledMechanisms()));
        if (!settings.enabledMechanisms().contains(mechanism)) {
            fail("Unsupported SASL mechanism " + mechanism,
                    frameOf(request, response.setErrorCode(Errors.UNSUPPORTED_SASL_MECHANISM.code())));
            return;
        }
        saslServer = mechanisms.apply(mechanism);
        state = request.apiVersion() >= 1 ? State.AUTHENTICATE : State.AUTHENTICATE_RAW;
        write(frameOf(request, response.setErrorCode(Errors.NONE.code())));
    }

    @SuppressWarnings("unchecked")
    private void onAuthenticate(DecodedRequest request) {
        if (request.apiKey() != ApiKey.SASL_AUTHENTICATE) {
            RequestContext context = new RequestContext(request.header(), request.apiKey(), connection,
                decoder.registry().authorizer());
            ApiMessage error = ((ApiHandler<ApiMessage, ApiMessage>) request.handler()).errorResponse(context,
                    request.body(), Errors.ILLEGAL_SASL_STATE);
            fail("Unexpected Kafka request of type " + request.apiKey().messageName()
                    + " during SASL authentication.", frameOf(request, error));
            return;
        }
        evaluate(((SaslAuthenticateRequestData) request.body()).authBytes(), request);
    }

    /** Evaluates a client token, on a worker when the mechanism is expensive; {@code request} is null on v0. */
    private void evaluate(byte[] token, DecodedRequest request) {
        if (!saslServer.expensive()) {
            onEvaluated(request, evaluateNow(token));
            return;
        }
        busy = true;
        updateRead();
        try {
            CompletableFuture.supplyAsync(() -> evaluateNow(token), workers).whenComplete((outcome, error) ->
                    ctx.executor().execute(() -> {
                        busy = false;
                        onEvaluated(request, error != null ? new Outcome(null, error.toString()) : outcome);
                        updateRead();
                        drainPending();
                    }));
        } catch (RejectedExecutionException e) {
            closeNow("the request-handler threads have stopped (the broker is shutting down)");
        }
    }

    private record Outcome(byte[] reply, String failure) {
    }

    private Outcome evaluateNow(byte[] token) {
        try {
            return new Outcome(saslServer.evaluateResponse(token), null);
        } catch (SaslAuthenticationException e) {
            return new Outcome(null, e.getMessage());
        } catch (RuntimeException e) {
            LOGGER.debug("SASL mechanism {} failed on connection {}", saslServer.mechanism(), connection, e);
            return new Outcome(null, "Authentication failed during authentication due to invalid credentials with "
                    + "SASL mechanism " + saslServer.mechanism());
        }
    }

    private void onEvaluated(DecodedRequest request, Outcome outcome) {
        if (state == State.FAILED || !ctx.channel().isActive()) {
            return;
        }
        if (outcome.failure() != null) {
            ResponseFrame response = request == null ? null : frameOf(request, new SaslAuthenticateResponseData()
                    .setErrorCode(Errors.SASL_AUTHENTICATION_FAILED.code()).setErrorMessage(outcome.failure())
                    .setAuthBytes(new byte[0]));
            fail(outcome.failure(), response);
            return;
        }
        byte[] reply = outcome.reply() == null ? new byte[0] : outcome.reply();
        boolean done = saslServer.complete();
        // session_lifetime_ms (v1+; ignorable, so v0 drops it): 0 before the exchange completes and when the
        // session does not expire (connections.max.reauth.ms 0, Kafka's default).
        long sessionLifetimeMs = done ? session.authenticated(saslServer.mechanism(), principal(),
                saslServer.credentialExpiryMs()) : 0L;
        if (request == null) {
            if (outcome.reply() != null) {
                ByteBuf raw = ctx.alloc().buffer(4 + reply.length);
                raw.writeInt(reply.length).writeBytes(reply);
                ctx.writeAndFlush(raw, ctx.voidPromise());
            }
        } else {
            write(frameOf(request, new SaslAuthenticateResponseData().setErrorCode(Errors.NONE.code())
                    .setAuthBytes(reply).setSessionLifetimeMs(sessionLifetimeMs)));
        }
        if (done) {
            complete();
        }
    }

    private KafkaPrincipal principal() {
        return new KafkaPrincipal(KafkaPrincipal.USER_TYPE, saslServer.authorizationId());
    }

    private void complete() {
        state = State.COMPLETE;
        connection.authenticated(principal(), saslServer.tokenAuthenticated());
        LOGGER.debug("Connection {} authenticated with SASL mechanism {}", connection, saslServer.mechanism());
        frameDecoder.maxRequestBytes(maxRequestBytes, RequestFrameDecoder.SOCKET_REQUEST_MAX_BYTES);
        busy = false;
        updateRead();
        ByteBuf frame;
        while ((frame = pending.poll()) != null) {
            ctx.fireChannelRead(frame);
        }
        ctx.pipeline().remove(this);
    }

    private void drainPending() {
        ByteBuf frame;
        while (!busy && state != State.COMPLETE && state != State.FAILED && (frame = pending.poll()) != null) {
            handle(frame);
        }
        if (state == State.COMPLETE) {
            while ((frame = pending.poll()) != null) {
                ctx.fireChannelRead(frame);
            }
        }
    }

    /**
     * A failed authentication: one INFO line, then after {@code connection.failed.authentication.delay.ms} the
     * response (when there is one) and the close, as Kafka's {@code Selector} delays a failed authentication.
     */
    private void fail(String reason, ResponseFrame response) {
        state = State.FAILED;
        busy = true;
        updateRead();
        releasePending();
        LOGGER.info("Failed authentication with {} on listener {} ({})", connection.remoteAddress(),
                connection.listenerName(), reason);
        Runnable answerAndClose = () -> {
            if (response == null) {
                ctx.close();
            } else {
                ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
            }
        };
        if (settings.failedAuthenticationDelayMs() == 0) {
            answerAndClose.run();
        } else {
            ctx.executor().schedule(answerAndClose, settings.failedAuthenticationDelayMs(), TimeUnit.MILLISECONDS);
        }
    }

    private void closeNow(String reason) {
        state = State.FAILED;
        releasePending();
        LOGGER.warn("Closing connection from {} on listener {}: {}", connection.remoteAddress(),
                connection.listenerName(), reason);
        ctx.close();
    }

    private static ResponseFrame frameOf(DecodedRequest request, ApiMessage body) {
        return new ResponseFrame(0, request.header().correlationId(),
                request.apiKey().responseHeaderVersion(request.apiVersion()), request.apiVersion(), body);
    }

    private void write(ResponseFrame frame) {
        ctx.writeAndFlush(frame, ctx.voidPromise());
    }

    private void updateRead() {
        ReadGate.of(ctx.channel()).set(ReadGate.SASL, busy || state == State.FAILED);
    }

    private void discard(ByteBuf frame) {
        memoryPool.release(frame.readableBytes());
        frame.release();
    }

    private void releasePending() {
        ByteBuf frame;
        while ((frame = pending.poll()) != null) {
            discard(frame);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        releasePending();
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (state != State.COMPLETE) {
            releasePending();
        }
    }
}
