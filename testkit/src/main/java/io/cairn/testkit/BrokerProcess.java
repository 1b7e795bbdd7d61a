package io.cairn.testkit;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;

/**
 * A broker running as a separate operating-system process on the loopback, with its own data directory and log
 * file: the real Cairn jar ({@link CairnProcess}) or the reference Apache Kafka ({@link KafkaReferenceProcess}).
 * A compat scenario written against this interface runs unchanged against both.
 *
 * <p>Lifecycle: {@link #start()} → ({@link #stop()} | {@link #kill()}) → {@link #start()} again keeps the port and
 * the data directory, so a restart sees the data the broker wrote; {@link #close()} stops the process and deletes
 * the data directory, keeping the log file. Processes are only ever stopped by their own PID. Implementations are
 * not thread-safe: one test thread drives a broker.
 */
public interface BrokerProcess extends AutoCloseable {

    /** A short label for test names and log files: {@code cairn} or {@code kafka}. */
    String name();

    /**
     * Starts the process and returns once it answers an ApiVersions request on its listener; throws an
     * {@link IllegalStateException} carrying the tail of its log if it exits or does not answer in time.
     */
    void start();

    /** Asks the process to shut down (SIGTERM); after a grace period it is killed (SIGKILL). Idempotent. */
    void stop();

    /** Kills the process at once (SIGKILL): a crash, with no chance to flush or close anything. Idempotent. */
    void kill();

    /** {@link #stop()} then {@link #start()}, same port, same data directory. */
    default void restart() {
        stop();
        start();
    }

    /**
     * JVM options added to the process's command line from its next {@link #start()} on (after its own), replacing
     * any given before; an empty list removes them. For a fault scenario that restarts one node of a cluster
     * differently, e.g. with a test-only system property that slows it down.
     */
    void extraJvmArgs(List<String> options);

    /**
     * A command that runs the process's command line from its next {@link #start()} on, e.g. {@code nsenter} into a
     * mount namespace whose small file system holds the data directory ({@link SizedTmpfs#enterCommand()}); it must
     * exec the command line so that the PID stays the process's. An empty list (the default) runs it directly.
     */
    void commandPrefix(List<String> prefix);

    /** The exit code of the last start's process once it has ended (stopped, killed or by itself); else empty. */
    OptionalInt exitCode();

    /** Whether the process is currently alive. */
    boolean isRunning();

    /** The host clients connect to: always {@value FreePorts#LOOPBACK}. */
    default String host() {
        return FreePorts.LOOPBACK;
    }

    /** The client listener's port, fixed for the life of this object. */
    int port();

    /** {@code host:port} of the client listener, the value for a client's {@code bootstrap.servers}. */
    default String bootstrapServers() {
        return host() + ":" + port();
    }

    /** The operating-system PID of the running process. */
    long pid();

    /** The broker's {@code log.dirs} directory. */
    Path dataDir();

    /** The file that receives the process's stdout and stderr, across restarts. */
    Path logFile();

    /** The last {@code lines} lines of {@link #logFile()}. */
    List<String> logTail(int lines);

    /** The lines of {@link #logFile()} that contain {@code text}, e.g. Netty's {@code LEAK:} reports. */
    List<String> logLinesContaining(String text);

    /** How long the last {@link #start()} took from spawning the process to its first ApiVersions answer. */
    Duration lastStartDuration();

    /** Stops the process if it runs and deletes the data directory; the log file is kept. Idempotent. */
    @Override
    void close();
}
