package io.cairn.testkit;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The process lifecycle shared by {@link CairnProcess} and {@link KafkaReferenceProcess}: spawn a JVM with its
 * output appended to one log file, wait for its first ApiVersions answer, stop it by PID (SIGTERM, then SIGKILL
 * after a grace period) or kill it, start it again on the same port and data directory, delete the work directory
 * on close.
 *
 * <p>Subclasses say how the command line looks and what must exist on disk before a start. Not thread-safe (see
 * {@link BrokerProcess}).
 */
abstract class AbstractBrokerProcess implements BrokerProcess {

    private static final Logger LOGGER = LogManager.getLogger(AbstractBrokerProcess.class);
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);
    private static final long POLL_MILLIS = 100;
    private static final int FAILURE_TAIL_LINES = 80;
    private static final int TAIL_BYTES = 256 * 1024;

    private final String name;
    private final int port;
    private final Path workDir;
    private final Path dataDir;
    private final Path logFile;
    private final Duration startTimeout;
    private final Duration stopTimeout;
    private Process process;
    private Duration lastStartDuration = Duration.ZERO;
    private int starts;
    private boolean closed;
    private List<String> extraJvmArgs = List.of();
    private List<String> commandPrefix = List.of();
    private ClassDataSharing.Launch sharing = ClassDataSharing.Launch.NONE;

    AbstractBrokerProcess(String name, int port, Duration startTimeout, Duration stopTimeout) {
        this.name = name;
        this.port = port;
        this.startTimeout = startTimeout;
        this.stopTimeout = stopTimeout;
        this.workDir = TestDirectories.createTempDirectory("cairn-" + name + "-");
        this.dataDir = workDir.resolve("data");
        Path logDir = BrokerLogs.currentLogDirectory();
        this.logFile = logDir.resolve(name + "-" + port + ".log");
        try {
            Files.createDirectories(dataDir);
        } catch (IOException e) {
            throw new UncheckedIOException("Could not create " + dataDir, e);
        }
    }

    /** The full command line of one start, beginning with the java executable. */
    abstract List<String> command();

    /**
     * The class-data sharing of the next start of {@link #command()} (see {@link ClassDataSharing}), whose options
     * go right after the java executable; none by default.
     */
    ClassDataSharing.Launch classDataSharing() {
        return ClassDataSharing.Launch.NONE;
    }

    @Override
    public void extraJvmArgs(List<String> options) {
        this.extraJvmArgs = List.copyOf(options);
    }

    @Override
    public void commandPrefix(List<String> prefix) {
        this.commandPrefix = List.copyOf(prefix);
    }

    /** The options of {@link #extraJvmArgs(List)}, for {@link #command()} to add after the process's own. */
    List<String> extraJvmArgs() {
        return extraJvmArgs;
    }

    /** Writes configuration and prepares storage before a start; may run other processes (storage format). */
    abstract void beforeStart();

    /**
     * A line the process logs once per start when it is fully started, checked in addition to the ApiVersions
     * answer (a broker may answer ApiVersions before it serves everything else); {@code null} for none.
     */
    String startedLogLine() {
        return null;
    }

    /** The directory that holds this broker's configuration files and data directory. */
    final Path workDir() {
        return workDir;
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final int port() {
        return port;
    }

    @Override
    public final Path dataDir() {
        return dataDir;
    }

    @Override
    public final Path logFile() {
        return logFile;
    }

    @Override
    public final Duration lastStartDuration() {
        return lastStartDuration;
    }

    @Override
    public final OptionalInt exitCode() {
        return process == null || process.isAlive() ? OptionalInt.empty() : OptionalInt.of(process.exitValue());
    }

    @Override
    public final boolean isRunning() {
        return process != null && process.isAlive();
    }

    @Override
    public final long pid() {
        if (process == null) {
            throw new IllegalStateException(name + " on port " + port + " has not been started");
        }
        return process.pid();
    }

    @Override
    public final void start() {
        if (closed) {
            throw new IllegalStateException(name + " on port " + port + " is closed");
        }
        if (isRunning()) {
            throw new IllegalStateException(name + " is already running as pid " + process.pid());
        }
        beforeStart();
        ClassDataSharing.Launch launch = classDataSharing();
        List<String> command = new ArrayList<>(command());
        command.addAll(1, launch.jvmArgs());
        command.addAll(0, commandPrefix);
        starts++;
        appendToLog("==== cairn-testkit: start #" + starts + " of " + name + " at " + Instant.now() + ": "
                + String.join(" ", abbreviateClasspath(command)));
        Instant begin = Instant.now();
        try {
            ProcessBuilder builder = new ProcessBuilder(command)
                    .directory(workDir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
            process = builder.start();
        } catch (IOException e) {
            throw new UncheckedIOException("Could not start " + name + ": " + command, e);
        }
        sharing = launch;
        launch.started(process, true);
        BrokerLogs.recordStart(this, process);
        awaitFirstAnswer(begin);
        lastStartDuration = Duration.between(begin, Instant.now());
        LOGGER.info("{} started as pid {} on {} in {} ms (data {}, log {})", name, process.pid(),
                bootstrapServers(), lastStartDuration.toMillis(), dataDir, logFile);
    }

    private void awaitFirstAnswer(Instant begin) {
        Instant deadline = begin.plus(startTimeout);
        while (true) {
            if (!process.isAlive()) {
                BrokerLogs.recordExit(process);
                throw new IllegalStateException(failureMessage(name + " exited with code " + process.exitValue()
                        + " before answering ApiVersions on " + bootstrapServers()));
            }
            if (ApiVersionsProbe.answers(host(), port, PROBE_TIMEOUT) && startedLineLogged()) {
                return;
            }
            if (Instant.now().isAfter(deadline)) {
                kill();
                throw new IllegalStateException(failureMessage(name + " did not answer ApiVersions on "
                        + bootstrapServers() + (startedLogLine() == null ? "" : " and log '" + startedLogLine() + "'")
                        + " within " + startTimeout.toSeconds() + " s"));
            }
            awaitExit(Duration.ofMillis(POLL_MILLIS));
        }
    }

    private boolean startedLineLogged() {
        String line = startedLogLine();
        return line == null || logLinesContaining(line).size() >= starts;
    }

    @Override
    public final void stop() {
        if (!isRunning()) {
            return;
        }
        long pid = process.pid();
        Instant begin = Instant.now();
        sharing.stopping();
        process.destroy();
        if (!awaitExit(stopTimeout)) {
            LOGGER.warn("{} pid {} did not stop within {} s of SIGTERM; sending SIGKILL", name, pid,
                    stopTimeout.toSeconds());
            process.destroyForcibly();
            awaitExit(stopTimeout);
        }
        sharing.exited(process);
        BrokerLogs.recordExit(process);
        LOGGER.info("{} pid {} stopped in {} ms (exit code {})", name, pid,
                Duration.between(begin, Instant.now()).toMillis(), exitCodeOrUnknown());
    }

    @Override
    public final void kill() {
        if (!isRunning()) {
            return;
        }
        long pid = process.pid();
        process.destroyForcibly();
        awaitExit(stopTimeout);
        BrokerLogs.recordExit(process);
        LOGGER.info("{} pid {} killed (exit code {})", name, pid, exitCodeOrUnknown());
    }

    @Override
    public final void close() {
        if (closed) {
            return;
        }
        try {
            stop();
        } finally {
            closed = true;
            TestDirectories.deleteRecursively(workDir);
        }
    }

    @Override
    public final List<String> logTail(int lines) {
        if (!Files.exists(logFile)) {
            return List.of();
        }
        try (RandomAccessFile file = new RandomAccessFile(logFile.toFile(), "r")) {
            long length = file.length();
            long from = Math.max(0, length - TAIL_BYTES);
            byte[] bytes = new byte[(int) (length - from)];
            file.seek(from);
            file.readFully(bytes);
            List<String> all = Arrays.asList(new String(bytes, StandardCharsets.UTF_8).split("\\R"));
            return new ArrayList<>(all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return List.of("(could not read " + logFile + ": " + e + ")");
        }
    }

    @Override
    public final List<String> logLinesContaining(String text) {
        try (var lines = Files.lines(logFile, StandardCharsets.UTF_8)) {
            return lines.filter(line -> line.contains(text)).toList();
        } catch (IOException e) {
            throw new UncheckedIOException("Could not read " + logFile, e);
        }
    }

    @Override
    public String toString() {
        return name + "@" + bootstrapServers();
    }

    final void appendToLog(String line) {
        try {
            Files.writeString(logFile, line + System.lineSeparator(), StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException("Could not write " + logFile, e);
        }
    }

    private String failureMessage(String what) {
        return what + "; full log " + logFile + ", last lines:\n" + String.join("\n", logTail(FAILURE_TAIL_LINES));
    }

    /** Waits up to {@code timeout} for the process to exit; true when it has. */
    private boolean awaitExit(Duration timeout) {
        try {
            process.onExit().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while waiting for " + name + " pid " + process.pid(), e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("Could not wait for " + name + " pid " + process.pid(), e);
        }
    }

    private String exitCodeOrUnknown() {
        return process.isAlive() ? "unknown, still alive" : Integer.toString(process.exitValue());
    }

    private static List<String> abbreviateClasspath(List<String> command) {
        List<String> shown = new ArrayList<>(command);
        for (int i = 0; i < shown.size() - 1; i++) {
            if (shown.get(i).equals("-cp") && shown.get(i + 1).length() > 200) {
                shown.set(i + 1, "<" + shown.get(i + 1).split(File.pathSeparator).length + " entries>");
            }
        }
        return shown;
    }
}
