package io.cairn.broker.quorum;

import io.cairn.broker.config.ControllerSasl;
import io.cairn.broker.security.PlainSaslServer;
import io.cairn.broker.security.SaslServer;
import io.cairn.broker.security.SslEngineFactory;
import io.cairn.isr.client.ClientSasl;
import io.cairn.isr.client.ClientTls;
import io.cairn.metadata.QuorumFront;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The {@link QuorumFront} of a controller listener mapped to SASL_PLAINTEXT or SASL_SSL ({@link ControllerSasl}):
 * <ul>
 *   <li>Inbound, it accepts on the node's quorum address, runs the TLS handshake (SASL_SSL) and the SASL exchange of
 *   Kafka's protocol ({@link QuorumSaslExchange}: SaslHandshake v1, SaslAuthenticate v0-2 with the controller
 *   mechanism), bounded in time and frame size, and only then relays the connection's bytes to the Raft server on its
 *   loopback port. A failed authentication is answered after {@code connection.failed.authentication.delay.ms} and
 *   closed with one INFO line; with an authorizer, a principal outside {@code super.users} is refused the same way.
 *   At most {@value #MAX_INBOUND} connections are open at once; more are closed unread.</li>
 *   <li>Outbound, each peer address gets one loopback port; a connection to it is carried to the peer over TLS
 *   (SASL_SSL, checking the peer's certificate as {@code ssl.*} says) and authenticated with this node's
 *   credentials ({@link ClientSasl}) before its bytes are relayed.</li>
 * </ul>
 * Each relayed connection has two copying threads; the quorum opens a handful of connections (one channel per peer
 * each way and the clients'), so a few dozen threads at most. With SASL_SSL each new connection, accepted or opened,
 * takes the TLS engines of the listener's current stores, which a dynamic {@code
 * listener.name.<controller>.ssl.keystore.*} change replaces (the broker's {@code QuorumStores}); the relayed
 * connections already open keep the session they negotiated.
 *
 * <p>Thread-safe.
 */
public final class SaslQuorumFront implements QuorumFront {

    private static final Logger LOGGER = LogManager.getLogger(SaslQuorumFront.class);
    /** The most inbound connections open at once (relayed or authenticating). */
    static final int MAX_INBOUND = 64;
    /** How long a connection may take to connect, handshake and authenticate. */
    static final int HANDSHAKE_TIMEOUT_MS = 10_000;
    private static final int BUFFER_BYTES = 64 * 1024;

    private final ControllerSasl settings;
    /** The TLS of SASL_SSL (server and client sides) for a new connection, null for SASL_PLAINTEXT. */
    private final Supplier<SslEngineFactory> tls;
    private final ClientTls client;
    private final ExecutorService threads;
    private final Semaphore inbound = new Semaphore(MAX_INBOUND);
    private final Map<String, Route> routes = new ConcurrentHashMap<>();
    private final AtomicInteger threadIds = new AtomicInteger();
    private volatile ServerSocket server;
    private volatile InetSocketAddress raftServer;
    private volatile boolean closed;

    /**
     * @param tls with SASL_SSL, the engines of the listener's current stores (asked for each new connection); null
     *            for SASL_PLAINTEXT
     */
    public SaslQuorumFront(ControllerSasl settings, int nodeId, Supplier<SslEngineFactory> tls) {
        if ((settings.ssl() == null) != (tls == null)) {
            throw new IllegalArgumentException("TLS engines are for a SASL_SSL controller listener only: " + settings);
        }
        this.settings = settings;
        this.tls = tls;
        ClientTls transport = tls == null ? ClientTls.PLAINTEXT
                : (socket, host, port) -> tls.get().connectClient(socket, host, port);
        this.client = new ClientSasl(transport, settings.client().mechanism(), settings.client().username(),
                settings.client().password());
        this.threads = Executors.newCachedThreadPool(r -> {
            Thread thread = new Thread(r, "cairn-quorum-front-" + nodeId + "-" + threadIds.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
    }

    @Override
    public void serve(InetSocketAddress publicAddress, InetSocketAddress raftServer) throws IOException {
        this.raftServer = new InetSocketAddress(InetAddress.getLoopbackAddress(), raftServer.getPort());
        ServerSocket socket = new ServerSocket();
        socket.setReuseAddress(true);
        socket.bind(publicAddress);
        this.server = socket;
        Thread acceptor = new Thread(() -> acceptInbound(socket), "cairn-quorum-front-accept");
        acceptor.setDaemon(true);
        acceptor.start();
        LOGGER.info("The controller listener {} serves the metadata quorum on {} with {}: each connection "
                + "authenticates before it reaches the Raft server", settings.listenerName(), socket
                .getLocalSocketAddress(), settings);
    }

    /** The address {@link #serve} bound (its port when it was 0); null before. */
    InetSocketAddress boundAddress() {
        ServerSocket socket = server;
        return socket == null ? null : (InetSocketAddress) socket.getLocalSocketAddress();
    }

    @Override
    public InetSocketAddress route(String host, int port) throws IOException {
        String key = host + ":" + port;
        Route route = routes.get(key);
        if (route == null) {
            synchronized (routes) {
                route = routes.get(key);
                if (route == null) {
                    if (closed) {
                        throw new IOException("the quorum front is closed");
                    }
                    route = new Route(host, port);
                    routes.put(key, route);
                }
            }
        }
        return route.local();
    }

    @Override
    public void close() {
        closed = true;
        closeQuietly(server);
        routes.values().forEach(Route::close);
        threads.shutdownNow();
    }

    @Override
    public String toString() {
        return settings.toString();
    }

    private void acceptInbound(ServerSocket socket) {
        while (!closed) {
            Socket accepted;
            try {
                accepted = socket.accept();
            } catch (IOException e) {
                if (!closed) {
                    LOGGER.warn("The quorum front stopped accepting on {}: {}", socket.getLocalSocketAddress(),
                            e.toString());
                }
                return;
            }
            if (!inbound.tryAcquire()) {
                LOGGER.info("Closing a connection to the metadata quorum from {}: {} are open already",
                        accepted.getRemoteSocketAddress(), MAX_INBOUND);
                closeQuietly(accepted);
                continue;
            }
            if (!submit(() -> {
                try {
                    serveInbound(accepted);
                } finally {
                    inbound.release();
                }
            })) {
                inbound.release();
                closeQuietly(accepted);
            }
        }
    }

    private void serveInbound(Socket accepted) {
        Socket raft = null;
        try {
            accepted.setSoTimeout(HANDSHAKE_TIMEOUT_MS);
            accepted.setTcpNoDelay(true);
            Socket secured = tls == null ? accepted : tls.get().acceptServer(accepted);
            SaslServer mechanism = new PlainSaslServer(settings.server().jaasOf(settings.client().mechanism()));
            QuorumSaslExchange exchange = new QuorumSaslExchange(settings, mechanism,
                    settings.server().maxReceiveSize(), settings.server().failedAuthenticationDelayMs());
            String principal = exchange.authenticate(secured.getInputStream(), secured.getOutputStream(),
                    accepted.getRemoteSocketAddress());
            if (principal == null) {
                closeQuietly(secured);
                return;
            }
            secured.setSoTimeout(0);
            raft = new Socket();
            raft.connect(raftServer, HANDSHAKE_TIMEOUT_MS);
            raft.setTcpNoDelay(true);
            LOGGER.debug("{} from {} reaches the metadata quorum", principal, accepted.getRemoteSocketAddress());
            relay(secured, raft);
        } catch (IOException | RuntimeException e) {
            LOGGER.info("Closing a connection to the metadata quorum from {} before it authenticated: {}",
                    accepted.getRemoteSocketAddress(), e.toString());
            closeQuietly(accepted);
            closeQuietly(raft);
        }
    }

    /** Copies each way on its own thread until either side ends, then closes both. */
    private void relay(Socket a, Socket b) throws IOException {
        InputStream aIn = a.getInputStream();
        OutputStream bOut = b.getOutputStream();
        if (!submit(() -> copy(b, a))) {
            throw new IOException("the quorum front is closed");
        }
        copy(aIn, bOut, a, b);
    }

    private void copy(Socket from, Socket to) {
        try {
            copy(from.getInputStream(), to.getOutputStream(), from, to);
        } catch (IOException e) {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    private static void copy(InputStream in, OutputStream out, Socket from, Socket to) {
        byte[] buffer = new byte[BUFFER_BYTES];
        try {
            for (int n; (n = in.read(buffer)) >= 0; ) {
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (IOException e) {
            // the other side closed, or this link failed: either way both ends go
        } finally {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    private boolean submit(Runnable task) {
        try {
            threads.execute(task);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    private static void closeQuietly(AutoCloseable closeable) {
        if (closeable == null) {
            return;
        }
        try {
            closeable.close();
        } catch (Exception e) {
            // closing
        }
    }

    /** One peer's loopback port: each connection to it is carried to the peer authenticated. */
    private final class Route {

        private final String host;
        private final int port;
        private final ServerSocket local;

        Route(String host, int port) throws IOException {
            this.host = host;
            this.port = port;
            this.local = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            Thread acceptor = new Thread(this::accept, "cairn-quorum-route-" + host + ":" + port);
            acceptor.setDaemon(true);
            acceptor.start();
        }

        InetSocketAddress local() {
            return new InetSocketAddress(InetAddress.getLoopbackAddress(), local.getLocalPort());
        }

        private void accept() {
            while (!closed) {
                Socket accepted;
                try {
                    accepted = local.accept();
                } catch (IOException e) {
                    return;
                }
                if (!submit(() -> carry(accepted))) {
                    closeQuietly(accepted);
                }
            }
        }

        private void carry(Socket accepted) {
            Socket remote = new Socket();
            try {
                accepted.setTcpNoDelay(true);
                remote.connect(new InetSocketAddress(host, port), HANDSHAKE_TIMEOUT_MS);
                remote.setTcpNoDelay(true);
                remote.setSoTimeout(HANDSHAKE_TIMEOUT_MS);
                Socket secured = client.secure(remote, host, port);
                secured.setSoTimeout(0);
                relay(accepted, secured);
            } catch (SocketException e) {
                LOGGER.debug("Cannot reach the metadata quorum's peer {}:{}: {}", host, port, e.toString());
                closeQuietly(accepted);
                closeQuietly(remote);
            } catch (IOException | RuntimeException e) {
                LOGGER.warn("Cannot authenticate to the metadata quorum's peer {}:{} with {}: {}", host, port,
                        settings, e.toString());
                closeQuietly(accepted);
                closeQuietly(remote);
            }
        }

        void close() {
            closeQuietly(local);
        }
    }
}
