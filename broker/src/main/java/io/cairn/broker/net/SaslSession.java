package io.cairn.broker.net;

import io.cairn.broker.config.SaslSettings;
import io.cairn.broker.handler.ApiHandler;
import io.cairn.broker.handler.ClientConnection;
import io.cairn.broker.handler.RequestContext;
import io.cairn.broker.metrics.SocketServerMetrics.ListenerMeters;
import io.cairn.broker.security.KafkaPrincipal;
import io.cairn.broker.security.SaslAuthenticationException;
import io.cairn.broker.security.SaslServer;
import io.cairn.log.Time;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.SaslAuthenticateRequestData;
import io.cairn.wire.message.SaslAuthenticateResponseData;
import io.cairn.wire.message.SaslHandshakeRequestData;
import io.cairn.wire.message.SaslHandshakeResponseData;
import io.cairn.wire.protocol.ApiMessage;
import java.util.ArrayList;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The SASL session of one SASL_PLAINTEXT or SASL_SSL connection once it has authenticated, and its re-authentication
 * (KIP-368), as Kafka's {@code SaslServerAuthenticator.ReauthInfo}, {@code KafkaChannel} and {@code SocketServer}
 * keep them:
 * <ul>
 *   <li>When the mechanism's {@code connections.max.reauth.ms} is positive the session expires that long after the
 *   authentication completed ({@link #sessionLifetimeMs}: the smaller of it and what is left of the credential's own
 *   lifetime; PLAIN and SCRAM credentials have none). SaslAuthenticate v1+ tells the client the lifetime; a client
 *   that authenticated with v0 (or raw v0 tokens) is not told and expires all the same, as in Kafka.</li>
 *   <li>Any request dispatched after the expiry closes the connection unanswered ({@link Route#EXPIRED}), except a
 *   SaslHandshake that begins a re-authentication.</li>
 *   <li>A SaslHandshake begins one when the session expires at all and the previous one began at least a second ago
 *   (Kafka's {@code MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS}); otherwise it reaches the handlers, which answer
 *   ILLEGAL_SASL_STATE. Then only SaslAuthenticate is read until the exchange completes; it must name the same
 *   principal with the same mechanism. The new lifetime starts when it completes.</li>
 *   <li>Failures are answered (SASL_AUTHENTICATION_FAILED, UNSUPPORTED_SASL_MECHANISM, ILLEGAL_SASL_STATE; a changed
 *   mechanism gets no answer, as Kafka's {@code REAUTH_BAD_MECHANISM}) after
 *   {@code connection.failed.authentication.delay.ms}, then the connection closes, with one INFO line.</li>
 * </ul>
 * The {@link RequestDispatcher} runs the re-authentication requests in its own order, so their responses go out after
 * those of earlier requests (a long-polling fetch answered meanwhile keeps its place) and later requests wait until
 * the exchange completes.
 *
 * <p>One instance per connection, made before the first authentication; used on the channel's event loop only
 * (a token evaluated on a request-handler thread comes back to the loop before any state changes).
 */
final class SaslSession {

    private static final Logger LOGGER = LogManager.getLogger(SaslSession.class);
    /** Kafka's floor between the starts of two re-authentications of one connection. */
    static final long MIN_REAUTH_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** What the dispatcher does with the next request. */
    enum Route {
        /** Dispatched as usual. */
        NORMAL,
        /** Part of a re-authentication: {@link #reauthenticate} answers it. */
        REAUTHENTICATE,
        /** The session has expired: the connection closes unanswered. */
        EXPIRED
    }

    /**
     * The answer to one re-authentication request.
     *
     * @param body the response, or null for none (a changed mechanism)
     * @param close whether the connection closes once it is written
     */
    record Reply(ApiMessage body, boolean close) {
    }

    private final SaslSettings settings;
    private final Function<String, SaslServer> mechanisms;
    private final Executor workers;
    private final ClientConnection connection;
    private final Time time;
    private final ListenerMeters meters;

    private String mechanism;
    private KafkaPrincipal principal;
    /** Whether the session expires, and when (the clock's nanoseconds). */
    private boolean expires;
    private long expiresAtNanos;
    /** When the last re-authentication began; meaningful once {@link #reauthenticated} is set. */
    private long lastReauthStartNanos;
    private boolean reauthenticated;
    /** The re-authentication in progress: its mechanism server, or null when none is. */
    private SaslServer reauthServer;
    private boolean reauthenticating;
    /** Set when the re-authentication asked for another mechanism: its next request fails (Kafka's message). */
    private String badMechanism;

    SaslSession(SaslSettings settings, Function<String, SaslServer> mechanisms, Executor workers,
            ClientConnection connection, Time time, ListenerMeters meters) {
        this.settings = settings;
        this.mechanisms = mechanisms;
        this.workers = workers;
        this.connection = connection;
        this.time = time;
        this.meters = meters;
    }

    /**
     * KIP-368's session lifetime: {@code connections.max.reauth.ms} when positive, capped by what is left of the
     * credential's lifetime when the mechanism gives one, never negative; empty when the session does not expire
     * (neither is set).
     *
     * @param maxReauthMs the mechanism's {@code connections.max.reauth.ms}
     * @param credentialExpirationMs when the credential expires (epoch milliseconds), or null when it does not
     * @param nowMs the time authentication completed (epoch milliseconds)
     */
    static OptionalLong sessionLifetimeMs(long maxReauthMs, Long credentialExpirationMs, long nowMs) {
        boolean maxReauthSet = maxReauthMs > 0;
        if (credentialExpirationMs == null) {
            return maxReauthSet ? OptionalLong.of(maxReauthMs) : OptionalLong.empty();
        }
        long credentialLeftMs = Math.max(0L, credentialExpirationMs - nowMs);
        return OptionalLong.of(maxReauthSet ? Math.min(credentialLeftMs, maxReauthMs) : credentialLeftMs);
    }

    /**
     * The first authentication completed with {@code mechanism} as {@code user}, whose credential expires at
     * {@code credentialExpiryMs} (epoch ms; empty: it does not, as PLAIN's and SCRAM's): starts the session.
     *
     * @return the session lifetime to send in SaslAuthenticate v1+ (0: it does not expire)
     */
    long authenticated(String authenticatedMechanism, KafkaPrincipal user, OptionalLong credentialExpiryMs) {
        this.mechanism = authenticatedMechanism;
        this.principal = user;
        return startSession(credentialExpiryMs);
    }

    private long startSession(OptionalLong credentialExpiryMs) {
        long nowNanos = time.nanoseconds();
        OptionalLong lifetime = sessionLifetimeMs(settings.maxReauthMs(mechanism),
                credentialExpiryMs.isPresent() ? credentialExpiryMs.getAsLong() : null, time.milliseconds());
        expires = lifetime.isPresent();
        expiresAtNanos = nowNanos + TimeUnit.MILLISECONDS.toNanos(lifetime.orElse(0L));
        if (LOGGER.isDebugEnabled()) {
            LOGGER.debug("Connection {} authenticated as {} with {}; {}", connection, principal, mechanism,
                    expires ? "the session expires in " + lifetime.getAsLong() + " ms" : "the session does not expire");
        }
        return lifetime.orElse(0L);
    }

    /** Whether the session has an expiry and it has passed. */
    boolean expired() {
        return expires && time.nanoseconds() - expiresAtNanos > 0;
    }

    /**
     * Routes the next request of the connection by its API key, before it is decoded (Kafka's
     * {@code processCompletedReceives}); a SaslHandshake routed to {@link Route#REAUTHENTICATE} has begun a
     * re-authentication.
     */
    Route route(short apiKey) {
        if (reauthenticating) {
            return Route.REAUTHENTICATE;
        }
        long nowNanos = time.nanoseconds();
        if (apiKey == ApiKey.SASL_HANDSHAKE.id() && expires
                && (!reauthenticated || nowNanos - lastReauthStartNanos >= MIN_REAUTH_INTERVAL_NANOS)) {
            reauthenticated = true;
            lastReauthStartNanos = nowNanos;
            reauthenticating = true;
            return Route.REAUTHENTICATE;
        }
        return expires && nowNanos - expiresAtNanos > 0 ? Route.EXPIRED : Route.NORMAL;
    }

    /**
     * Answers a request routed to {@link Route#REAUTHENTICATE}: the SaslHandshake that began it, then the
     * SaslAuthenticate exchange.
     *
     * @param loop the connection's event loop (failure delays; tokens evaluated elsewhere come back to it)
     */
    CompletableFuture<Reply> reauthenticate(DecodedRequest request, RequestContext context,
            ScheduledExecutorService loop) {
        if (reauthServer == null && badMechanism == null) {
            return onHandshake(request, loop);
        }
        if (badMechanism != null) {
            return fail(badMechanism, null, loop);
        }
        if (request.apiKey() != ApiKey.SASL_AUTHENTICATE) {
            return fail("Unexpected Kafka request of type " + request.apiKey().messageName()
                    + " during SASL re-authentication.", errorResponse(request, context), loop);
        }
        byte[] token = ((SaslAuthenticateRequestData) request.body()).authBytes();
        if (!reauthServer.expensive()) {
            return onEvaluated(evaluate(token), loop);
        }
        try {
            return CompletableFuture.supplyAsync(() -> evaluate(token), workers)
                    .exceptionally(e -> new Outcome(null, e.toString()))
                    .thenComposeAsync(outcome -> onEvaluated(outcome, loop), loop);
        } catch (RejectedExecutionException e) {
            return CompletableFuture.completedFuture(new Reply(null, true));
        }
    }

    @SuppressWarnings("unchecked")
    private static ApiMessage errorResponse(DecodedRequest request, RequestContext context) {
        if (request.unsupportedApiVersions()) {
            return null;
        }
        return ((ApiHandler<ApiMessage, ApiMessage>) request.handler()).errorResponse(context, request.body(),
                Errors.ILLEGAL_SASL_STATE);
    }

    private CompletableFuture<Reply> onHandshake(DecodedRequest request, ScheduledExecutorService loop) {
        if (request.apiVersion() < 1) {
            // Raw v0 tokens would follow; a client that re-authenticates was told its lifetime by SaslAuthenticate
            // v1+, so it sends SaslHandshake v1 (Kafka's SaslClientAuthenticator always does).
            return fail("re-authentication needs SaslHandshake v1 or later, got v" + request.apiVersion(), null,
                    loop);
        }
        String requested = ((SaslHandshakeRequestData) request.body()).mechanism();
        SaslHandshakeResponseData response = new SaslHandshakeResponseData()
                .setMechanisms(new ArrayList<>(settings.enabledMechanisms()));
        if (!settings.enabledMechanisms().contains(requested)) {
            return fail("Unsupported SASL mechanism " + requested,
                    response.setErrorCode(Errors.UNSUPPORTED_SASL_MECHANISM.code()), loop);
        }
        if (!requested.equals(mechanism)) {
            badMechanism = "SASL mechanism '" + requested + "' requested by client is not supported for "
                    + "re-authentication of mechanism '" + mechanism + "'";
        } else {
            reauthServer = mechanisms.apply(requested);
        }
        LOGGER.debug("Connection {} begins re-authentication with {}", connection, requested);
        return CompletableFuture.completedFuture(new Reply(response.setErrorCode(Errors.NONE.code()), false));
    }

    private record Outcome(byte[] reply, String failure) {
    }

    private Outcome evaluate(byte[] token) {
        try {
            return new Outcome(reauthServer.evaluateResponse(token), null);
        } catch (SaslAuthenticationException e) {
            return new Outcome(null, e.getMessage());
        } catch (RuntimeException e) {
            LOGGER.debug("SASL mechanism {} failed on connection {}", reauthServer.mechanism(), connection, e);
            return new Outcome(null, "Authentication failed during re-authentication due to invalid credentials "
                    + "with SASL mechanism " + reauthServer.mechanism());
        }
    }

    private CompletableFuture<Reply> onEvaluated(Outcome outcome, ScheduledExecutorService loop) {
        if (outcome.failure() != null) {
            return fail(outcome.failure(), authenticateFailed(outcome.failure()), loop);
        }
        byte[] token = outcome.reply() == null ? new byte[0] : outcome.reply();
        SaslAuthenticateResponseData response = new SaslAuthenticateResponseData().setErrorCode(Errors.NONE.code())
                .setAuthBytes(token);
        if (!reauthServer.complete()) {
            return CompletableFuture.completedFuture(new Reply(response.setSessionLifetimeMs(0L), false));
        }
        KafkaPrincipal reauthenticatedAs = new KafkaPrincipal(KafkaPrincipal.USER_TYPE,
                reauthServer.authorizationId());
        if (!reauthenticatedAs.equals(principal)) {
            String message = "Cannot change principals during re-authentication from "
                    + principal.principalType() + "." + principal.name() + ": "
                    + reauthenticatedAs.principalType() + "." + reauthenticatedAs.name();
            return fail(message, authenticateFailed(message), loop);
        }
        OptionalLong credentialExpiryMs = reauthServer.credentialExpiryMs();
        reauthServer = null;
        reauthenticating = false;
        long lifetimeMs = startSession(credentialExpiryMs);
        long latencyNanos = time.nanoseconds() - lastReauthStartNanos;
        meters.reauthenticated(latencyNanos == 0 ? 0 : Math.max(1L, Math.round(latencyNanos / 1_000_000.0)));
        return CompletableFuture.completedFuture(new Reply(response.setSessionLifetimeMs(lifetimeMs), false));
    }

    private static SaslAuthenticateResponseData authenticateFailed(String message) {
        return new SaslAuthenticateResponseData().setErrorCode(Errors.SASL_AUTHENTICATION_FAILED.code())
                .setErrorMessage(message).setAuthBytes(new byte[0]);
    }

    /**
     * A failed re-authentication: one INFO line (Kafka's {@code Selector} wording), then after
     * {@code connection.failed.authentication.delay.ms} the response, when there is one, and the close.
     */
    private CompletableFuture<Reply> fail(String reason, ApiMessage response, ScheduledExecutorService loop) {
        reauthServer = null;
        badMechanism = null;
        meters.reauthenticationFailed();
        LOGGER.info("Failed re-authentication with {} on listener {} ({})", connection.remoteAddress(),
                connection.listenerName(), reason);
        Reply reply = new Reply(response, true);
        if (settings.failedAuthenticationDelayMs() == 0) {
            return CompletableFuture.completedFuture(reply);
        }
        CompletableFuture<Reply> delayed = new CompletableFuture<>();
        try {
            loop.schedule(() -> delayed.complete(reply), settings.failedAuthenticationDelayMs(),
                    TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            delayed.complete(new Reply(null, true));
        }
        return delayed;
    }
}
