package io.cairn.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;

/**
 * Finds free TCP ports on the IPv4 loopback by binding port 0 and letting the kernel choose.
 *
 * <p>A port is only known to be free at the moment it was probed; another process may take it before the broker
 * binds it. The window is small (the broker starts right after) and the kernel hands out ephemeral ports in
 * rotation, so collisions are rare. Stateless and thread-safe.
 */
public final class FreePorts {

    /** The address every test broker listens on: the IPv4 loopback. */
    public static final String LOOPBACK = "127.0.0.1";

    private FreePorts() {
    }

    /** One free port on {@link #LOOPBACK}. */
    public static int freePort() {
        return freePorts(1)[0];
    }

    /**
     * {@code count} distinct free ports on {@link #LOOPBACK}: all sockets are held open together until every port is
     * chosen, so the kernel cannot return the same port twice.
     */
    public static int[] freePorts(int count) {
        if (count < 1) {
            throw new IllegalArgumentException("count must be positive, was " + count);
        }
        List<ServerSocket> sockets = new ArrayList<>(count);
        try {
            int[] ports = new int[count];
            for (int i = 0; i < count; i++) {
                ServerSocket socket = new ServerSocket();
                sockets.add(socket);
                socket.setReuseAddress(true);
                socket.bind(new InetSocketAddress(InetAddress.getByName(LOOPBACK), 0));
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

    private static void closeQuietly(ServerSocket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // The port was only probed; a failed close leaves nothing to clean up for the caller.
        }
    }
}
