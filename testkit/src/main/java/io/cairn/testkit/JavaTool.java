package io.cairn.testkit;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs one Java main class in a child JVM, as a user runs a Kafka CLI tool, and captures its exit code, stdout and
 * stderr. A child process (rather than calling {@code main} in the test JVM) keeps the tool's {@code System.exit},
 * static state and logging out of the test JVM, and a hung tool can be killed by PID. Kafka's tools without JVM-wide
 * side effects run in the test JVM instead ({@link KafkaDistribution#tool}, {@link InProcessTool}), with the same
 * result.
 *
 * <p>Build one with {@link #builder(String)}; each {@link #run()} is independent. Not thread-safe while being built;
 * a built instance may run from any thread.
 */
public final class JavaTool {

    private static final Logger LOGGER = LogManager.getLogger(JavaTool.class);

    private final String mainClass;
    private final String classpath;
    private final List<String> jvmArgs;
    private final List<String> args;
    private final Duration timeout;
    private final Path workDir;
    private final boolean inProcess;

    private JavaTool(Builder builder) {
        this.mainClass = builder.mainClass;
        this.classpath = builder.classpath;
        this.jvmArgs = List.copyOf(builder.jvmArgs);
        this.args = List.copyOf(builder.args);
        this.timeout = builder.timeout;
        this.workDir = builder.workDir;
        this.inProcess = builder.inProcess;
    }

    /** A tool running {@code mainClass}; by default on this JVM's classpath with a 60 s timeout. */
    public static Builder builder(String mainClass) {
        return new Builder(mainClass);
    }

    /** Whether {@link #run()} calls the main class in this JVM ({@link InProcessTool}) rather than a child JVM. */
    public boolean inProcess() {
        return inProcess;
    }

    /** The {@code java} executable of the running JVM. */
    public static String javaExecutable() {
        return Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    }

    /**
     * Runs the tool to completion. If it outlives the timeout it is killed (SIGKILL, by PID) and an
     * {@link IllegalStateException} carries what it printed so far.
     */
    public Result run() {
        if (inProcess) {
            return InProcessTool.run(mainClass, args, timeout);
        }
        Path dir = workDir != null ? workDir : TestDirectories.createTempDirectory("cairn-tool-");
        Path stdout = dir.resolve("tool-" + System.nanoTime() + ".out");
        Path stderr = dir.resolve("tool-" + System.nanoTime() + ".err");
        ClassDataSharing.Launch sharing = ClassDataSharing.launch(mainClass, ClassDataSharing.entries(classpath),
                jvmArgs);
        List<String> command = new ArrayList<>();
        command.add(javaExecutable());
        command.addAll(jvmArgs);
        command.addAll(sharing.jvmArgs());
        command.add("-cp");
        command.add(classpath);
        command.add(mainClass);
        command.addAll(args);
        Instant begin = Instant.now();
        Process process = null;
        try {
            process = new ProcessBuilder(command)
                    .directory(dir.toFile())
                    .redirectOutput(stdout.toFile())
                    .redirectError(stderr.toFile())
                    .start();
            sharing.started(process, false);
            boolean exited = process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (!exited) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
                throw new IllegalStateException(mainClass + " " + args + " (pid " + process.pid()
                        + ") did not finish within " + timeout.toSeconds() + " s and was killed; stdout:\n"
                        + read(stdout) + "\nstderr:\n" + read(stderr));
            }
            Result result = new Result(process.exitValue(), read(stdout), read(stderr),
                    Duration.between(begin, Instant.now()));
            LOGGER.info("{} {} exited with {} in {} ms", mainClass, args, result.exitCode(),
                    result.elapsed().toMillis());
            return result;
        } catch (IOException e) {
            throw new UncheckedIOException("Could not run " + mainClass, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while running " + mainClass, e);
        } finally {
            if (process != null) {
                sharing.exited(process);
            }
            if (workDir == null) {
                TestDirectories.deleteRecursively(dir);
            }
        }
    }

    private static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            throw new UncheckedIOException("Could not read " + file, e);
        }
    }

    /**
     * What a tool run produced.
     *
     * @param exitCode the process's exit code
     * @param stdout everything it wrote to standard output
     * @param stderr everything it wrote to standard error
     * @param elapsed wall time from spawn to exit
     */
    public record Result(int exitCode, String stdout, String stderr, Duration elapsed) {

        @Override
        public String toString() {
            return "exit code " + exitCode + " after " + elapsed.toMillis() + " ms\n--- stdout ---\n" + stdout
                    + "\n--- stderr ---\n" + stderr;
        }
    }

    /** Collects a tool's command line. Not thread-safe. */
    public static final class Builder {

        private final String mainClass;
        private String classpath = System.getProperty("java.class.path");
        private final List<String> jvmArgs = new ArrayList<>();
        private final List<String> args = new ArrayList<>();
        private Duration timeout = Duration.ofSeconds(60);
        private Path workDir;
        private boolean inProcess;

        private Builder(String mainClass) {
            this.mainClass = mainClass;
        }

        /** The child's classpath, entries joined by the path separator; the tool then runs in a child JVM. */
        public Builder classpath(String value) {
            this.classpath = value;
            this.inProcess = false;
            return this;
        }

        /** Adds JVM options placed before {@code -cp}; the tool then runs in a child JVM. */
        public Builder jvmArgs(String... values) {
            this.jvmArgs.addAll(List.of(values));
            this.inProcess = false;
            return this;
        }

        /** Adds program arguments. */
        public Builder args(String... values) {
            this.args.addAll(List.of(values));
            return this;
        }

        /** Adds program arguments. */
        public Builder args(List<String> values) {
            this.args.addAll(values);
            return this;
        }

        /** How long the tool may run before it is killed. */
        public Builder timeout(Duration value) {
            this.timeout = value;
            return this;
        }

        /** The child's working directory (kept); by default a temp directory deleted after the run. */
        public Builder workDir(Path value) {
            this.workDir = value;
            this.inProcess = false;
            return this;
        }

        /** Runs the main class in a child JVM even where {@link KafkaDistribution#tool} would run it in this one. */
        public Builder inChildJvm() {
            this.inProcess = false;
            return this;
        }

        /**
         * Runs the main class in this JVM ({@link InProcessTool}) rather than a child, until a later classpath, JVM
         * option or working directory asks for a child. Only for a tool with no JVM-wide side effects (no shutdown
         * hook, no standard input, no system property) whose class is on this JVM's classpath.
         */
        Builder inProcess() {
            this.inProcess = true;
            return this;
        }

        /** The tool described so far. */
        public JavaTool build() {
            return new JavaTool(this);
        }
    }
}
