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
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
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
 * re-authentication, KIP-368), with the SASL settings current when the connection was accepted (a dynamic config
 * replaces them for later connections, {@link #replaceSasl}).
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
    /**
     * The listener's SASL settings and the servers made from them, or null when it is not a SASL listener: written by
     * {@link #replaceSasl} (a dynamic config), read once by each accepted connection, which keeps the pair it took.
     */
    private volatile Sasl sasl;
    /** The servers {@link #replaceSasl} replaced (connections accepted before may still use them), closed by close. */
    private final List<SaslServers> retiredSaslServers = new CopyOnWriteArrayList<>();
    private final ScramCredentials scramCredentials;
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
        this.scramCredentials = scramCredentials;
        this.sasl = sasl == null ? null : new Sasl(sasl, new SaslServers(sasl, scramCredentials));
    }

    /** A listener's SASL settings and its servers. */
    private record Sasl(SaslSettings settings, SaslServers servers) {
    }

    /** The listener's SASL settings now, or null when it is not a SASL listener. */
    SaslSettings saslSettings() {
        Sasl now = sasl;
        return now == null ? null : now.settings();
    }

    /**
     * Makes {@code next} the SASL settings of the listener's next connections (its mechanisms, JAAS users, ...);
     * connections already accepted, and their re-authentications, keep the settings they were accepted with.
     *
     * @throws IllegalStateException when the servers of {@code next} cannot start (OAUTHBEARER's keys)
     */
    synchronized void replaceSasl(SaslSettings next) {
        Sasl old = sasl;
        if (old == null) {
            throw new IllegalStateException("listener " + endpoint.listenerName() + " is not a SASL listener");
        }
        sasl = new Sasl(next, new SaslServers(next, scramCredentials));
        retiredSaslServers.add(old.servers());
    }

    /** Stops what the listener's SASL mechanisms run in the background (the OAUTHBEARER key refresh). */
    void close() {
        Sasl now = sasl;
        if (now != null) {
            now.servers().close();
        }
        retiredSaslServers.forEach(SaslServers::close);
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
        Sasl saslNow = sasl;
        if (saslNow != null) {
            SaslSettings settings = saslNow.settings();
            session = new SaslSession(settings, saslNow.servers(), requestHandlers, connection, metrics.time(),
                    metrics.connections());
            frameDecoder.maxRequestBytes(Math.min(settings.maxReceiveSize(), maxRequestBytes),
                    SaslSettings.MAX_RECEIVE_SIZE + " (before SASL authentication)");
            pipeline.addLast("sasl", new SaslServerAuthenticator(settings, decoder, connection, memoryPool,
                    requestHandlers, frameDecoder, maxRequestBytes, saslNow.servers(), session));
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
