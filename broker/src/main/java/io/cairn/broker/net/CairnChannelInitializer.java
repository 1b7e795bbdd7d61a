package io.cairn.broker.net;

import io.cairn.broker.config.Endpoint;
import io.cairn.broker.config.SaslSettings;
import io.cairn.broker.handler.ClientConnection;
import io.cairn.broker.handler.HandlerRegistry;
import io.cairn.broker.security.SaslServers;
import io.cairn.broker.security.ScramCredentials;
import io.cairn.broker.security.SslEngineFactory;
import io.cairn.broker.security.SslFactory;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.timeout.IdleStateHandler;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Builds the pipeline of every connection accepted on one listener:
 * <pre>
 *   socket → [TLS → principal] → [idle timeout] → RequestFrameDecoder → [SASL] → RequestDispatcher
 *   socket ← [TLS] ← ReadGate ← ResponseEncoder ← [SASL] ← ResponseOrderer ← RequestDispatcher
 * </pre>
 * On an SSL listener the {@link SslHandler} (a server engine of the listener's current {@link SslEngineFactory}, which
 * a reload of its stores replaces for later connections only) sits next to
 * the socket, and the {@link ResponseEncoder} seeing it copies fetched file data into buffers instead of sending
 * file regions (TLS must encrypt the bytes, so there is no sendfile). On a SASL listener the
 * {@link SaslServerAuthenticator} answers everything until the client has authenticated, then leaves the pipeline;
 * the connection's {@link SaslSession} it started goes on with the {@link RequestDispatcher} (expiry and
 * re-authentication, KIP-368).
 *
 * <p>Thread-safe: called by the acceptor for each new channel; the connection counter is atomic.
 */
final class CairnChannelInitializer extends ChannelInitializer<SocketChannel> {

    private static final ResponseEncoder ENCODER = new ResponseEncoder();

    private final Endpoint endpoint;
    private final RequestDecoder decoder;
    private final int maxRequestBytes;
    private final long connectionsMaxIdleMs;
    private final ChannelGroup channels;
    private final RequestMemoryPool memoryPool;
    private final Executor requestHandlers;
    private final DispatcherMetrics metrics;
    /** The listener's TLS engines (each connection takes the current ones), or null on a PLAINTEXT listener. */
    private final SslFactory ssl;
    /** The listener's SASL settings, or null when it is not a SASL listener. */
    private final SaslSettings sasl;
    private final SaslServers saslServers;
    private final AtomicLong connectionIndex = new AtomicLong();
    /** Whether connections note their activity (for {@link ConnectionQuotas}' choice of which to close). */
    private final boolean trackActivity;

    CairnChannelInitializer(Endpoint endpoint, HandlerRegistry registry, int maxRequestBytes,
            long connectionsMaxIdleMs, ChannelGroup channels, RequestMemoryPool memoryPool,
            Executor requestHandlers, DispatcherMetrics metrics, SslFactory ssl, SaslSettings sasl,
            ScramCredentials scramCredentials, boolean trackActivity) {
        this.trackActivity = trackActivity;
        this.endpoint = endpoint;
        this.decoder = new RequestDecoder(registry, endpoint.listenerName());
        this.maxRequestBytes = maxRequestBytes;
        this.connectionsMaxIdleMs = connectionsMaxIdleMs;
        this.channels = channels;
        this.memoryPool = memoryPool;
        this.requestHandlers = requestHandlers;
        this.metrics = metrics;
        this.ssl = ssl;
        this.sasl = sasl;
        this.saslServers = sasl == null ? null : new SaslServers(sasl, scramCredentials);
    }

    /** Stops what the listener's SASL mechanisms run in the background (the OAUTHBEARER key refresh). */
    void close() {
        if (saslServers != null) {
            saslServers.close();
        }
    }

    @Override
    protected void initChannel(SocketChannel channel) {
        channels.add(channel);
        ChannelPipeline pipeline = channel.pipeline();
        ClientConnection connection = newConnection(channel);
        if (trackActivity) {
            pipeline.addLast("activity", ConnectionQuotas.activity());
        }
        if (ssl != null) {
            // the engines current now: a later reload of the listener's stores leaves this connection alone
            SslEngineFactory engines = ssl.current();
            pipeline.addLast("ssl", new SslHandler(engines.newServerEngine()));
            pipeline.addLast("principal", new SslPrincipalHandler(engines, connection));
        }
        pipeline.addLast("readGate", new ReadGate());
        if (connectionsMaxIdleMs > 0) {
            pipeline.addLast("idle", new IdleStateHandler(0, 0, connectionsMaxIdleMs, TimeUnit.MILLISECONDS));
        }
        RequestFrameDecoder frameDecoder = new RequestFrameDecoder(maxRequestBytes, endpoint.listenerName(),
                memoryPool);
        pipeline.addLast("frameDecoder", frameDecoder);
        pipeline.addLast("responseEncoder", ENCODER);
        SaslSession session = null;
        if (sasl != null) {
            session = new SaslSession(sasl, saslServers, requestHandlers, connection, metrics.time(),
                    metrics.connections());
            frameDecoder.maxRequestBytes(Math.min(sasl.maxReceiveSize(), maxRequestBytes),
                    SaslSettings.MAX_RECEIVE_SIZE + " (before SASL authentication)");
            pipeline.addLast("sasl", new SaslServerAuthenticator(sasl, decoder, connection, memoryPool,
                    requestHandlers, frameDecoder, maxRequestBytes, saslServers, session));
        }
        pipeline.addLast("responseOrderer", new ResponseOrderer());
        pipeline.addLast("dispatcher", new RequestDispatcher(decoder, memoryPool, requestHandlers,
                endpoint.listenerName(), ctx -> connection, metrics, session));
    }

    /** Kafka-style connection id: {@code localHost:localPort-remoteHost:remotePort-index}. */
    private ClientConnection newConnection(SocketChannel channel) {
        SocketAddress local = channel.localAddress();
        SocketAddress remote = channel.remoteAddress();
        String id = hostAndPort(local) + "-" + hostAndPort(remote) + "-" + connectionIndex.getAndIncrement();
        return new ClientConnection(id, endpoint.listenerName(), remote, endpoint.securityProtocol());
    }

    private static String hostAndPort(SocketAddress address) {
        if (address instanceof InetSocketAddress) {
            InetSocketAddress inet = (InetSocketAddress) address;
            return inet.getHostString() + ":" + inet.getPort();
        }
        return String.valueOf(address);
    }
}
