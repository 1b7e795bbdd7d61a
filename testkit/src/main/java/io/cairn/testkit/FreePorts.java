package io.cairn.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Finds free TCP ports on the IPv4 loopback for test brokers, below the kernel's ephemeral port range
 * ({@code net.ipv4.ip_local_port_range}), so that the outgoing connections of every process on the machine (clients,
 * Raft peers, proxies), which take ephemeral ports, can never take a port a test chose before its broker binds it.
 * Each JVM starts at a random point of the range and walks it in turn, probing each port by binding it.
 *
 * <p>A port is only known to be free at the moment it was probed; another test JVM may probe and bind the same port
 * meanwhile, which the random start makes rare. Stateless apart from the walk's position, thread-safe.
 */
public final class FreePorts {

    /** The address every test broker listens on: the IPv4 loopback. */
    public static final String LOOPBACK = "127.0.0.1";
    private static final int LOWEST = 10_000;
    private static final int HIGHEST = ephemeralLow() - 1;
    private static final AtomicInteger NEXT = new AtomicInteger(
            ThreadLocalRandom.current().nextInt(Math.max(1, HIGHEST - LOWEST + 1)));

    private FreePorts() {
    }

    /** One free port on {@link #LOOPBACK}. */
    public static int freePort() {
        return freePorts(1)[0];
    }

    /**
     * {@code count} distinct free ports on {@link #LOOPBACK}: all sockets are held open together until every port is
     * chosen, so no port is returned twice.
     */
    public static int[] freePorts(int count) {
        if (count < 1) {
            throw new IllegalArgumentException("count must be positive, was " + count);
        }
        List<ServerSocket> sockets = new ArrayList<>(count);
        try {
            int[] ports = new int[count];
            for (int i = 0; i < count; i++) {
                ServerSocket socket = bindBelowEphemeral();
                sockets.add(socket);
                ports[i] = socket.getLocalPort();
            }
            return ports;
        } catch (IOException e) {
            throw new UncheckedIOException("Could not bind a free port on " + LOOPBACK, e);
        } finally {
            for (ServerSocket socket : sockets) {
                closeQuietly(socket);
            }
        }
    }

    /** The next port of the range that binds; port 0 (an ephemeral one) when the range has none free. */
    private static ServerSocket bindBelowEphemeral() throws IOException {
        int size = HIGHEST - LOWEST + 1;
        for (int attempt = 0; attempt < Math.min(size, 2_000); attempt++) {
            int port = LOWEST + Math.floorMod(NEXT.getAndIncrement(), size);
            ServerSocket socket = new ServerSocket();
            try {
                socket.setReuseAddress(true);
                socket.bind(new InetSocketAddress(InetAddress.getByName(LOOPBACK), port));
                return socket;
            } catch (IOException taken) {
                closeQuietly(socket);
            }
        }
        ServerSocket socket = new ServerSocket();
        socket.setReuseAddress(true);
        socket.bind(new InetSocketAddress(InetAddress.getByName(LOOPBACK), 0));
        return socket;
    }

    /** The first ephemeral port of this machine (Linux), 32768 when it cannot be read or leaves no room below. */
    private static int ephemeralLow() {
        try {
            String line = Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).get(0);
            String[] range = line.trim().split("\\s+");
            int low = Integer.parseInt(range[0]);
            return low > LOWEST + 1_000 ? low : 32_768;
        } catch (IOException | RuntimeException e) {
            return 32_768;
        }
    }

    private static void closeQuietly(ServerSocket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // The port was only probed; a failed close leaves nothing to clean up for the caller.
        }
    }
}
