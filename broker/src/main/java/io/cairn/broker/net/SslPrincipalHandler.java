package io.cairn.broker.net;

import io.cairn.broker.handler.ClientConnection;
import io.cairn.broker.security.KafkaPrincipal;
import io.cairn.broker.security.SslEngineFactory;
import io.cairn.broker.security.SslPrincipalMapper;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import javax.net.ssl.SSLException;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Sits behind the {@link SslHandler} of a TLS connection: when the handshake completes it derives the peer's
 * principal ({@link SslEngineFactory#principal}) and records it on the connection before any request is read; a
 * failed handshake, or a certificate name no {@code ssl.principal.mapping.rules} rule applies to, closes the
 * connection with one INFO line, as Kafka logs a failed authentication (no stack trace, no WARN: a client that
 * cannot authenticate is not the broker's fault).
 *
 * <p>One instance per connection, used on its event loop only.
 */
final class SslPrincipalHandler extends ChannelInboundHandlerAdapter {

    private static final Logger LOGGER = LogManager.getLogger(SslPrincipalHandler.class);

    private final SslEngineFactory factory;
    private final ClientConnection connection;
    private boolean failed;

    SslPrincipalHandler(SslEngineFactory factory, ClientConnection connection) {
        this.factory = factory;
        this.connection = connection;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof SslHandshakeCompletionEvent) {
            SslHandshakeCompletionEvent completion = (SslHandshakeCompletionEvent) evt;
            if (!completion.isSuccess()) {
                fail(ctx, "SSL handshake failed: " + message(completion.cause()));
                return;
            }
            SslHandler ssl = ctx.pipeline().get(SslHandler.class);
            try {
                KafkaPrincipal principal = factory.principal(ssl.engine().getSession());
                connection.authenticated(principal);
                LOGGER.debug("Connection {} authenticated over {} ({})", connection,
                        ssl.engine().getSession().getProtocol(), ssl.engine().getSession().getCipherSuite());
            } catch (SslPrincipalMapper.NoMatchingRuleException e) {
                fail(ctx, e.getMessage());
                return;
            }
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (sslFailure(cause)) {
            fail(ctx, "SSL handshake failed: " + message(cause));
            return;
        }
        ctx.fireExceptionCaught(cause);
    }

    private void fail(ChannelHandlerContext ctx, String reason) {
        if (!failed) {
            failed = true;
            LOGGER.info("Failed authentication with {} on listener {} ({})", ctx.channel().remoteAddress(),
                    connection.listenerName(), reason);
        }
        ctx.close();
    }

    private static boolean sslFailure(Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t instanceof SSLException) {
                return true;
            }
        }
        return false;
    }

    private static String message(Throwable cause) {
        Throwable root = cause;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getMessage() != null ? root.getMessage() : root.toString();
    }
}
