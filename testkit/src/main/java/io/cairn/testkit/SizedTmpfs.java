package io.cairn.testkit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.junit.jupiter.api.Assumptions;

/**
 * A small file system for a full-disk scenario: a tmpfs of a given size at a directory, mounted in a private mount
 * namespace that a holder process ({@code unshare -m}, then {@code sleep}) keeps alive, starting with a copy of what
 * the directory held. A process started through {@link #enterCommand()} ({@code nsenter} into that namespace, which
 * execs the command, so the PID stays) sees the tmpfs; everything else, this JVM included, sees the directory
 * underneath. Writing past its size fails with ENOSPC as a full disk does, and nothing outside the test is touched:
 * the mount goes with the namespace when {@link #close()} kills the holder by its PID.
 *
 * <p>Needs the right to make a mount namespace: root, or unprivileged user namespaces (the holder then maps this user
 * to root in a user namespace of its own, {@code unshare -r}). Where neither works, {@link #mount} skips the calling
 * test, or fails it when the environment variable {@value #REQUIRE} is set (as {@code .ci/run} does). Not
 * thread-safe.
 */
public final class SizedTmpfs implements AutoCloseable {

    /** Set (to anything) to make a machine without mount namespaces fail the full-disk tests instead of skipping. */
    public static final String REQUIRE = "CAIRN_REQUIRE_MOUNT_NAMESPACE";

    private static final Logger LOGGER = LogManager.getLogger(SizedTmpfs.class);
    private static final String MOUNTED = "mounted";

    private final Path dir;
    private final Process holder;
    private final boolean userNamespace;

    private SizedTmpfs(Path dir, Process holder, boolean userNamespace) {
        this.dir = dir;
        this.holder = holder;
        this.userNamespace = userNamespace;
    }

    /**
     * Mounts a tmpfs of {@code megabytes} MiB at {@code dir} (created when missing) in a namespace of its own, holding
     * a copy of what {@code dir} held: a broker that ran on it before goes on with its data on a small disk. Skips
     * (or, with {@value #REQUIRE}, fails) the calling test where the machine cannot make the namespace.
     */
    public static SizedTmpfs mount(Path dir, int megabytes) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("Could not create " + dir, e);
        }
        boolean root = "root".equals(System.getProperty("user.name"));
        List<String> command = new ArrayList<>(List.of("unshare", "-m", "--propagation", "private"));
        if (!root) {
            command.add(1, "-r");
        }
        // What the directory holds is copied aside, the tmpfs mounted over it, and the copy put back (a mount moved
        // into place, simpler, is refused in an unprivileged user namespace).
        String script = "stage=$(mktemp -d) && cp -R \"$0\"/. \"$stage\"/ && mount -t tmpfs -o size=" + megabytes
                + "m tmpfs \"$0\" && cp -R \"$stage\"/. \"$0\"/ && rm -rf \"$stage\" && echo " + MOUNTED
                + " && exec sleep 86400";
        command.addAll(List.of("sh", "-c", script, dir.toString()));
        String first;
        Process holder = null;
        try {
            holder = new ProcessBuilder(command).redirectErrorStream(true).start();
            first = new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8))
                    .readLine();
        } catch (IOException e) {
            first = "cannot run unshare (util-linux): " + e.getMessage();
        }
        if (!MOUNTED.equals(first)) {
            if (holder != null) {
                holder.destroyForcibly();
            }
            String reason = "cannot mount a tmpfs in a private mount namespace (" + String.join(" ", command)
                    + "): " + first;
            if (System.getenv(REQUIRE) != null) {
                throw new IllegalStateException(reason + " (" + REQUIRE + " is set, so this is required)");
            }
            Assumptions.abort(reason);
        }
        LOGGER.info("tmpfs of {} MiB at {} in the mount namespace of pid {}", megabytes, dir, holder.pid());
        return new SizedTmpfs(dir, holder, !root);
    }

    public Path dir() {
        return dir;
    }

    /** The prefix that runs a command inside the namespace (see {@link BrokerProcess#commandPrefix}). */
    public List<String> enterCommand() {
        List<String> command = new ArrayList<>(List.of("nsenter", "-t", Long.toString(holder.pid()), "-m"));
        if (userNamespace) {
            command.addAll(List.of("-U", "--preserve-credentials"));
        }
        command.add("--");
        return command;
    }

    /** Grows (or shrinks) the tmpfs to {@code megabytes} MiB in place: what freeing space on the disk does. */
    public void resize(int megabytes) {
        List<String> command = new ArrayList<>(enterCommand());
        command.addAll(List.of("mount", "-t", "tmpfs", "-o", "remount,size=" + megabytes + "m", "tmpfs",
                dir.toString()));
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
                process.destroyForcibly();
                throw new IllegalStateException("Could not resize the tmpfs at " + dir + " (" + command + "): "
                        + output);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Could not run " + command, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted resizing the tmpfs at " + dir, e);
        }
    }

    /** Kills the holder by its PID; the tmpfs and what it held go with the namespace. */
    @Override
    public void close() {
        holder.destroyForcibly();
        try {
            holder.waitFor(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
