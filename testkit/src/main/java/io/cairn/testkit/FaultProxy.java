package io.cairn.testkit;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongPredicate;

/**
 * A TCP forwarder on the loopback for fault injection: every connection to {@link #port()} is relayed to a target
 * {@code host:port}, byte for byte, until {@link #partition()} stalls it. While partitioned, new connections are
 * still accepted (as a peer behind a dead link would see its SYN answered by nothing in between) and no byte moves
 * in either direction on any connection; the bytes already read wait, as TCP retransmits would, and flow again on
 * {@link #heal()}. Nothing is closed by a partition, so each side only notices through its own timeouts, as with a
 * real network partition.
 *
 * <p>A partition may also cut only some of the connections, by the process that opened them ({@link #partitionFrom}):
 * each connection's client process is looked up once, when it is accepted ({@link SocketOwners}), so a fault
 * campaign with a proxy in front of every node can cut one node off from the others in both directions (on its own
 * proxies every connection but its own; on the others' proxies, its connections) while the test's clients still
 * reach it.
 *
 * <p>A connection may also be slowed rather than cut ({@link #throttleFrom}): its bytes flow at a bounded rate each
 * way, as over a slow or congested link, so a follower behind it keeps fetching but falls behind.
 *
 * <p>Owns its listening socket, the relayed sockets and their daemon threads (one acceptor, two relays per
 * connection); {@link #close()} closes them all. Thread-safe: {@code partition}, {@code heal} and {@code close} may
 * be called from any thread.
 */
public final class FaultProxy implements AutoCloseable {

    private static final Logger LOGGER = LogManager.getLogger(FaultProxy.class);
    private static final int BUFFER_BYTES = 64 * 1024;

    private final String targetHost;
    private final int targetPort;
    private final ServerSocket server;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private static final LongPredicate NONE = pid -> false;
    private static final LongPredicate ALL = pid -> true;
    /** A connection whose client process is not known: a partition of "every process but X" cuts it. */
    public static final long UNKNOWN_PROCESS = -1;

    private final Object gate = new Object();
    /** Which connections are stalled, by their client's pid ({@link #UNKNOWN_PROCESS} when not known). */
    private LongPredicate cut = NONE;
    /** Which connections are paced ({@link #throttleFrom}), and to how many bytes a second each way. */
    private volatile LongPredicate throttled = NONE;
    private volatile long throttleBytesPerSecond;
    private volatile boolean closed;

    private FaultProxy(int port, String targetHost, int targetPort) {
        this.targetHost = targetHost;
        this.targetPort = targetPort;
        try {
            server = new ServerSocket();
            server.setReuseAddress(true);
            server.bind(new InetSocketAddress(InetAddress.getByName(FreePorts.LOOPBACK), port));
        } catch (IOException e) {
            throw new UncheckedIOException("Could not listen on " + FreePorts.LOOPBACK + ":" + port, e);
        }
        Thread acceptor = new Thread(this::acceptLoop, "fault-proxy-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** A proxy on {@code port} ({@code 0}: a free one) of the loopback to {@code targetHost:targetPort}, healed. */
    public static FaultProxy start(int port, String targetHost, int targetPort) {
        return new FaultProxy(port, targetHost, targetPort);
    }

    /** The port the proxy listens on. */
    public int port() {
        return server.getLocalPort();
    }

    /** Stalls every connection, present and future, both ways, until {@link #heal()}. */
    public void partition() {
        synchronized (gate) {
            cut = ALL;
            gate.notifyAll();
        }
        LOGGER.info("{} partitioned", this);
    }

    /**
     * Stalls, both ways, every connection, present and future, whose client process's pid matches {@code clients}
     * (called with {@link #UNKNOWN_PROCESS} for a connection whose process could not be found), until
     * {@link #heal()}; the other connections flow. Replaces any partition in force.
     */
    public void partitionFrom(LongPredicate clients) {
        synchronized (gate) {
            cut = clients;
            gate.notifyAll();
        }
        LOGGER.info("{} partitioned for some client processes", this);
    }

    /** Lets bytes flow again, the ones held during the partition first. */
    public void heal() {
        synchronized (gate) {
            cut = NONE;
            gate.notifyAll();
        }
        LOGGER.info("{} healed", this);
    }

    /**
     * Paces every connection, present and future, whose client process's pid matches {@code clients} to at most
     * {@code bytesPerSecond} in each direction (a slow link: bytes flow, late), until {@link #unthrottle()}; the other
     * connections flow at full speed. Replaces any throttle in force.
     */
    public void throttleFrom(LongPredicate clients, long bytesPerSecond) {
        if (bytesPerSecond <= 0) {
            throw new IllegalArgumentException("bytesPerSecond must be positive: " + bytesPerSecond);
        }
        throttleBytesPerSecond = bytesPerSecond;
        throttled = clients;
        LOGGER.info("{} throttled to {} bytes/s for some client processes", this, bytesPerSecond);
    }

    /** Lets throttled connections flow at full speed again. */
    public void unthrottle() {
        throttled = NONE;
        LOGGER.info("{} unthrottled", this);
    }

    /** Whether every connection is stalled ({@link #partition()}). */
    public boolean isPartitioned() {
        synchronized (gate) {
            return cut == ALL;
        }
    }

    @Override
    public void close() {
        closed = true;
        heal();
        closeQuietly(server);
        sockets.forEach(FaultProxy::closeQuietly);
    }

    @Override
    public String toString() {
        return "FaultProxy[:" + port() + " -> " + targetHost + ":" + targetPort + "]";
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                if (!closed) {
                    LOGGER.warn("{} stopped accepting: {}", this, e.toString());
                }
                return;
            }
            sockets.add(client);
            Thread connector = new Thread(() -> connect(client), "fault-proxy-connect-" + port());
            connector.setDaemon(true);
            connector.start();
        }
    }

    private void connect(Socket client) {
        OptionalLong owner = SocketOwners.ownerOf(client.getPort(), port());
        long pid = owner.isPresent() ? owner.getAsLong() : UNKNOWN_PROCESS;
        awaitHealed(pid);
        Socket target = new Socket();
        sockets.add(target);
        try {
            target.connect(new InetSocketAddress(targetHost, targetPort));
            client.setTcpNoDelay(true);
            target.setTcpNoDelay(true);
        } catch (IOException e) {
            closeQuietly(client);
            closeQuietly(target);
            return;
        }
        relay(client, target, "up", pid);
        relay(target, client, "down", pid);
    }

    private void relay(Socket from, Socket to, String direction, long pid) {
        Thread thread = new Thread(() -> {
            byte[] buffer = new byte[BUFFER_BYTES];
            long paceNanos = Long.MIN_VALUE;
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int read;
                while ((read = in.read(buffer)) >= 0) {
                    awaitHealed(pid);
                    paceNanos = pace(pid, read, paceNanos);
                    out.write(buffer, 0, read);
                    out.flush();
                }
            } catch (IOException e) {
                // One side closed or reset: close both, as a forwarder does.
            } finally {
                closeQuietly(from);
                closeQuietly(to);
                sockets.remove(from);
                sockets.remove(to);
            }
        }, "fault-proxy-" + port() + "-" + direction);
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * For a throttled connection, sleeps until {@code bytes} more may go at the throttle's rate, counted from
     * {@code nextNanos} (when the bytes before may have gone); returns when the next bytes may go.
     */
    private long pace(long pid, int bytes, long nextNanos) {
        long rate = throttleBytesPerSecond;
        if (!throttled.test(pid) || rate <= 0) {
            return nextNanos;
        }
        long at = Math.max(nextNanos, System.nanoTime()) + bytes * 1_000_000_000L / rate;
        long wait = at - System.nanoTime();
        if (wait > 0) {
            try {
                Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return at;
    }

    /** Waits while connections of the client process {@code pid} are cut. */
    private void awaitHealed(long pid) {
        synchronized (gate) {
            while (cut.test(pid) && !closed) {
                try {
                    gate.wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    private static void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception ignored) {
            // Closing on the way out; nothing is left to release.
        }
    }
}
