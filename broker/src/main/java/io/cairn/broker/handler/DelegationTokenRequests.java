package io.cairn.broker.handler;

import io.cairn.broker.config.SecurityProtocol;
import io.cairn.broker.security.KafkaPrincipal;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.controller.ForwardedRequest;
import io.cairn.wire.protocol.ApiMessage;
import java.util.concurrent.CompletableFuture;

/**
 * What the four delegation-token handlers share: Kafka's {@code allowTokenRequests} and the forwarding of a command
 * to the active controller with the requesting principal. Stateless, thread-safe.
 */
final class DelegationTokenRequests {

    /** Kafka's {@code DelegationTokenManager.ErrorTimestamp}: the expiry a refused renew or expire answers. */
    static final long ERROR_TIMESTAMP = -1L;

    private DelegationTokenRequests() {
    }

    /**
     * Kafka's {@code allowTokenRequests}: not over a connection that authenticated with a delegation token, not over
     * PLAINTEXT, and not over SSL without a client certificate (one-way TLS), where the principal proves nothing.
     */
    static boolean allowed(RequestContext ctx) {
        ClientConnection connection = ctx.connection();
        SecurityProtocol protocol = connection.securityProtocol();
        return !connection.tokenAuthenticated() && protocol != SecurityProtocol.PLAINTEXT
                && !(protocol == SecurityProtocol.SSL && KafkaPrincipal.ANONYMOUS.equals(connection.principal()));
    }

    /** The request sent to the active controller on behalf of the connection's principal. */
    static CompletableFuture<ApiMessage> forward(MetadataNode metadata, RequestContext ctx, ApiMessage request) {
        return ControllerCalls.withTimeout(metadata.submit(ForwardedRequest.wrap(request,
                ctx.connection().principal().toString())), ControllerCalls.FORWARD_TIMEOUT_MS);
    }
}
