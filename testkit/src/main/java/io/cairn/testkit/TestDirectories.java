package io.cairn.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * Where test brokers keep their files: data directories in the system temp dir (deleted when the broker is closed)
 * and logs under {@code target/broker-logs/<test>/} (kept after the run, so a failed build can be diagnosed).
 *
 * <p>The log root is the system property {@value #LOGS_DIR_PROPERTY} (the poms set it to
 * {@code ${project.build.directory}/broker-logs}); without it, {@code target/broker-logs} under the working
 * directory. Stateless and thread-safe.
 */
public final class TestDirectories {

    /** System property naming the directory under which broker logs are kept. */
    public static final String LOGS_DIR_PROPERTY = "cairn.broker.logs.dir";

    private TestDirectories() {
    }

    /** A fresh directory in the system temp dir whose name starts with {@code prefix}. */
    public static Path createTempDirectory(String prefix) {
        try {
            return Files.createTempDirectory(prefix);
        } catch (IOException e) {
            throw new UncheckedIOException("Could not create a temp directory " + prefix + "*", e);
        }
    }

    /**
     * The directory that holds the logs of brokers started by the test {@code testName}; created if missing. Each
     * {@code /}-separated part of the name becomes one directory level ({@code TestClass/testMethod}).
     */
    public static Path logDirectory(String testName) {
        String root = System.getProperty(LOGS_DIR_PROPERTY, Paths.get("target", "broker-logs").toString());
        Path dir = Paths.get(root).toAbsolutePath();
        for (String part : testName.split("/")) {
            dir = dir.resolve(sanitize(part));
        }
        try {
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("Could not create the broker log directory " + dir, e);
        }
    }

    /** Deletes {@code root} and everything below it; a missing directory is not an error. */
    public static void deleteRecursively(Path root) {
        if (root == null || !Files.exists(root)) {
            return;
        }
        try {
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path dir, IOException exc) throws IOException {
                    deleteIfExists(dir);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException("Could not delete " + root, e);
        }
    }

    private static void deleteIfExists(Path path) throws IOException {
        try {
            Files.deleteIfExists(path);
        } catch (NoSuchFileException ignored) {
            // Deleted concurrently (a broker still shutting down); the goal is reached.
        }
    }

    /** Turns a test display name into a safe single path segment. */
    static String sanitize(String testName) {
        String cleaned = testName.replaceAll("[^A-Za-z0-9._-]+", "_").replaceAll("^_+|_+$", "");
        if (cleaned.isEmpty()) {
            return "unnamed";
        }
        return cleaned.length() > 120 ? cleaned.substring(0, 120) : cleaned;
    }
}
