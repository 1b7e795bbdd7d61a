package io.cairn.testkit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * A small file system for a full-disk scenario: a tmpfs of a given size at a directory, mounted in a private mount
 * namespace that a holder process ({@code unshare -m}, then {@code sleep}) keeps alive, starting with a copy of what
 * the directory held. A process started through
 * {@link #enterCommand()} ({@code nsenter} into that namespace, which execs the command, so the PID stays) sees the
 * tmpfs; everything else, this JVM included, sees the empty directory underneath. Writing past its size fails with
 * ENOSPC as a full disk does, and nothing outside the test is touched: the mount goes with the namespace when
 * {@link #close()} kills the holder by its PID.
 *
 * <p>Needs the right to make a mount namespace: root, or unprivileged user namespaces (the holder then maps this user
 * to root in a user namespace of its own, {@code unshare -r}). {@link #mount} throws {@link Unavailable} when neither
 * works, for the test to skip. Not thread-safe.
 */
public final class SizedTmpfs implements AutoCloseable {

    private static final Logger LOGGER = LogManager.getLogger(SizedTmpfs.class);
    private static final String MOUNTED = "mounted";

    /** The machine cannot make a mount namespace with a tmpfs in it; the message says why. */
    public static final class Unavailable extends Exception {
        private static final long serialVersionUID = 1L;

        Unavailable(String message) {
            super(message);
        }
    }

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
     * a copy of what {@code dir} held: a broker that ran on it before goes on with its data on a small disk.
     */
    public static SizedTmpfs mount(Path dir, int megabytes) throws Unavailable {
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
        // The tmpfs is mounted at a staging directory first and takes a copy of what the directory holds (a
        // formatted broker's storage), then moves over it.
        String script = "stage=$(mktemp -d) && mount -t tmpfs -o size=" + megabytes + "m tmpfs \"$stage\""
                + " && cp -a \"$0\"/. \"$stage\"/ && mount --move \"$stage\" \"$0\" && rmdir \"$stage\""
                + " && echo " + MOUNTED + " && exec sleep 86400";
        command.addAll(List.of("sh", "-c", script, dir.toString()));
        Process holder;
        try {
            holder = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new Unavailable("cannot run unshare (util-linux): " + e.getMessage());
        }
        String first;
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(holder.getInputStream(),
                    StandardCharsets.UTF_8));
            first = out.readLine();
        } catch (IOException e) {
            first = null;
        }
        if (!MOUNTED.equals(first)) {
            holder.destroyForcibly();
            throw new Unavailable("cannot mount a tmpfs in a private mount namespace (" + String.join(" ", command)
                    + "): " + first);
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
        command.addAll(List.of("mount", "-o", "remount,size=" + megabytes + "m", dir.toString()));
        JavaTool.Result result = run(command);
        if (result.exitCode() != 0) {
            throw new IllegalStateException("Could not resize the tmpfs at " + dir + ": " + result);
        }
    }

    private static JavaTool.Result run(List<String> command) {
        long start = System.nanoTime();
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            byte[] out = process.getInputStream().readAllBytes();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
            return new JavaTool.Result(process.isAlive() ? -1 : process.exitValue(),
                    new String(out, StandardCharsets.UTF_8), "", Duration.ofNanos(System.nanoTime() - start));
        } catch (IOException e) {
            throw new UncheckedIOException("Could not run " + command, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted running " + command, e);
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
