package io.cairn.testkit;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.OptionalLong;

/**
 * Which local process holds the client end of a loopback TCP connection, read from Linux's {@code /proc}: the socket
 * whose local port is the connection's client port and whose remote port is the server's, in {@code /proc/net/tcp}
 * and {@code /proc/net/tcp6}, then the process with a descriptor on that socket's inode. {@link FaultProxy} uses it
 * to tell which broker opened each connection it relays, so that a partition can cut one node off from the others
 * in both directions.
 *
 * <p>Stateless; each call reads {@code /proc} afresh (a few milliseconds), so call it once per connection, not per
 * byte. Empty where there is no {@code /proc} (not Linux) or the socket is already gone.
 */
public final class SocketOwners {

    private static final Path PROC = Path.of("/proc");
    /** {@code /proc/net/tcp} state of an established connection. */
    private static final String ESTABLISHED = "01";

    private SocketOwners() {
    }

    /** The pid of the process holding the socket from local {@code clientPort} to remote {@code serverPort}. */
    public static OptionalLong ownerOf(int clientPort, int serverPort) {
        OptionalLong inode = inode(clientPort, serverPort);
        if (inode.isEmpty()) {
            return OptionalLong.empty();
        }
        String link = "socket:[" + inode.getAsLong() + "]";
        // This JVM first: the tests' own clients are the commonest owners and the cheapest to check.
        long self = ProcessHandle.current().pid();
        if (holds(self, link)) {
            return OptionalLong.of(self);
        }
        for (long pid : pids()) {
            if (pid != self && holds(pid, link)) {
                return OptionalLong.of(pid);
            }
        }
        return OptionalLong.empty();
    }

    private static OptionalLong inode(int clientPort, int serverPort) {
        String local = ":" + hexPort(clientPort);
        String remote = ":" + hexPort(serverPort);
        for (String table : List.of("net/tcp", "net/tcp6")) {
            List<String> lines;
            try {
                lines = Files.readAllLines(PROC.resolve(table));
            } catch (IOException e) {
                continue;
            }
            for (String line : lines.subList(Math.min(1, lines.size()), lines.size())) {
                // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...
                String[] f = line.trim().split("\\s+");
                if (f.length > 9 && f[1].endsWith(local) && f[2].endsWith(remote) && f[3].equals(ESTABLISHED)) {
                    long inode = Long.parseLong(f[9]);
                    if (inode != 0) {
                        return OptionalLong.of(inode);
                    }
                }
            }
        }
        return OptionalLong.empty();
    }

    private static String hexPort(int port) {
        return String.format(Locale.ROOT, "%04X", port);
    }

    private static List<Long> pids() {
        List<Long> pids = new ArrayList<>();
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(PROC, "[0-9]*")) {
            for (Path dir : dirs) {
                pids.add(Long.parseLong(dir.getFileName().toString()));
            }
        } catch (IOException | RuntimeException e) {
            // No /proc here: no owner can be found.
        }
        return pids;
    }

    private static boolean holds(long pid, String link) {
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(PROC.resolve(Long.toString(pid)).resolve("fd"))) {
            for (Path fd : fds) {
                try {
                    if (link.equals(Files.readSymbolicLink(fd).toString())) {
                        return true;
                    }
                } catch (IOException e) {
                    // The descriptor closed while we looked: not the one.
                }
            }
        } catch (IOException | RuntimeException e) {
            // The process ended or is not ours to read.
        }
        return false;
    }
}
