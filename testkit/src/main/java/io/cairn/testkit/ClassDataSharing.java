package io.cairn.testkit;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

/**
 * Application class-data sharing (JDK 13+ dynamic archives, JEP 350) for the child JVMs the harness starts again and
 * again with the same classpath: the reference Kafka, Kafka's CLI tools, the Cairn broker and its storage tool. The
 * first start of a kind dumps the classes it loaded when it exits ({@code -XX:ArchiveClassesAtExit}); later starts
 * map that archive ({@code -XX:SharedArchiveFile}) instead of parsing and verifying the same classes from the jars
 * again, which halves a start's CPU on two cores. It changes nothing a test can observe: what runs is the same
 * bytecode, and a missing, stale or refused archive only means a slower start ({@code -Xlog:cds*=off} keeps the
 * JVM's CDS warnings out of the output tests read).
 *
 * <p>On only when the system property {@value #DIR_PROPERTY} names the directory of the archives (compat-tests' pom
 * sets {@code target/cds}). An archive is keyed by the java home, the JVM options and each classpath file's path, size
 * and modification time, so a rebuilt jar gets a new one. A classpath holding a directory gets none (the JVM refuses
 * to archive from directories). Every start dumps until one has exited cleanly and published its archive by an atomic
 * rename, so JVMs sharing the directory never map half a file. Thread-safe.
 */
final class ClassDataSharing {

    /** System property naming the directory that holds the archives; class-data sharing is off when unset. */
    static final String DIR_PROPERTY = "cairn.cds.dir";

    private static final Logger LOGGER = LogManager.getLogger(ClassDataSharing.class);
    private static final String QUIET = "-Xlog:cds*=off";
    /** The exit value of a process killed by SIGKILL: its archive may be half written. */
    private static final int KILLED = 128 + 9;

    private ClassDataSharing() {
    }

    /**
     * The class-data sharing of one start of {@code main} (a main class or a jar) on {@code classpath} with
     * {@code jvmArgs}: nothing when off or not possible, else the archive to map or to dump.
     */
    static Launch launch(String main, List<Path> classpath, List<String> jvmArgs) {
        String dir = System.getProperty(DIR_PROPERTY);
        if (dir == null || dir.isBlank() || classpath.stream().anyMatch(Files::isDirectory)) {
            return Launch.NONE;
        }
        Path archive = Paths.get(dir).toAbsolutePath()
                .resolve(simpleName(main) + "-" + key(main, classpath, jvmArgs) + ".jsa");
        if (Files.isRegularFile(archive)) {
            return new Launch(List.of("-XX:SharedArchiveFile=" + archive, QUIET), null, null);
        }
        // Every start dumps until one has exited and published its archive: the first one may be a shared broker
        // that runs until the test JVM exits.
        try {
            Files.createDirectories(archive.getParent());
        } catch (IOException e) {
            LOGGER.warn("No class-data sharing archive for {}: could not create {}", main, archive.getParent(), e);
            return Launch.NONE;
        }
        Path dumping = archive.resolveSibling(archive.getFileName() + "." + UUID.randomUUID() + ".tmp");
        return new Launch(List.of("-XX:ArchiveClassesAtExit=" + dumping, QUIET), dumping, archive);
    }

    /** The entries of a classpath string. */
    static List<Path> entries(String classpath) {
        return Stream.of(classpath.split(java.io.File.pathSeparator)).filter(s -> !s.isEmpty()).map(Paths::get)
                .toList();
    }

    /** An executable jar and the jars of the {@code lib/} directory beside it (its manifest's Class-Path). */
    static List<Path> executableJar(Path jar) {
        List<Path> files = new ArrayList<>(List.of(jar));
        Path lib = jar.toAbsolutePath().resolveSibling("lib");
        if (Files.isDirectory(lib)) {
            try (Stream<Path> jars = Files.list(lib)) {
                jars.sorted().forEach(files::add);
            } catch (IOException e) {
                LOGGER.debug("Could not list {}", lib, e);
            }
        }
        return files;
    }

    /** {@code ConfigCommand} for {@code kafka.admin.ConfigCommand}, {@code cairn-broker-0.1.0} for its jar. */
    private static String simpleName(String main) {
        if (main.endsWith(".jar")) {
            String name = Paths.get(main).getFileName().toString();
            return name.substring(0, name.length() - ".jar".length());
        }
        return main.substring(main.lastIndexOf('.') + 1);
    }

    private static String key(String main, List<Path> classpath, List<String> jvmArgs) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            List<String> parts = new ArrayList<>(List.of(System.getProperty("java.home"),
                    System.getProperty("java.vm.version"), main));
            // System properties differ per start (a broker's log directory) and do not matter to the archive.
            jvmArgs.stream().filter(arg -> !arg.startsWith("-D")).forEach(parts::add);
            for (Path entry : classpath) {
                parts.add(entry.toAbsolutePath().toString());
                try {
                    parts.add(Files.size(entry) + "@" + Files.getLastModifiedTime(entry).toMillis());
                } catch (IOException e) {
                    parts.add("missing");
                }
            }
            digest.update(String.join("\n", parts).getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest.digest(), 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /** One start's class-data sharing: the JVM options to add, and publishing the archive the start dumped. */
    static final class Launch {

        static final Launch NONE = new Launch(List.of(), null, null);

        private final List<String> jvmArgs;
        private final Path dumping;
        private final Path archive;
        private final AtomicBoolean done = new AtomicBoolean();
        /** Completed once the archive is published or dropped: a caller that lost the race to it waits for it. */
        private final CompletableFuture<Void> handled = new CompletableFuture<>();
        private volatile boolean publish;

        private Launch(List<String> jvmArgs, Path dumping, Path archive) {
            this.jvmArgs = jvmArgs;
            this.dumping = dumping;
            this.archive = archive;
        }

        /** The options to put before {@code -cp}/{@code -jar}. */
        List<String> jvmArgs() {
            return jvmArgs;
        }

        /**
         * Call once the JVM has been spawned: when it exits, the archive it dumped is published. With
         * {@code onlyWhenStopped} (a broker) only after {@link #stopping()}: a broker that exits by itself has not run
         * what it serves (it refused its configuration), and its archive would hold only the classes of a start.
         */
        void started(Process process, boolean onlyWhenStopped) {
            this.publish = !onlyWhenStopped;
            if (dumping != null) {
                process.onExit().thenRun(() -> exited(process));
            }
        }

        /** Call right before asking the JVM to stop (SIGTERM): its archive is worth publishing. */
        void stopping() {
            publish = true;
        }


        /**
         * Publishes the archive of a JVM that has exited (also done by {@link #started}'s exit hook; whichever runs
         * first does it): call it where the exit is waited for, so the archive is there for the next start.
         */
        void exited(Process process) {
            if (dumping == null || process.isAlive()) {
                return;
            }
            if (!done.compareAndSet(false, true)) {
                // The other caller (the exit hook, or the waiter) is publishing: the archive must be in place when
                // this returns, or the next start would not find it (and a directory listing would see the dump).
                try {
                    handled.get(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (ExecutionException | TimeoutException e) {
                    LOGGER.warn("Waited in vain for the class-data sharing archive {} to be published", archive);
                }
                return;
            }
            try {
                publishOrDrop(process.exitValue());
            } finally {
                handled.complete(null);
            }
        }

        private void publishOrDrop(int exitValue) {
            try {
                if (publish && exitValue != KILLED && !Files.exists(archive) && Files.isRegularFile(dumping)
                        && Files.size(dumping) > 0) {
                    Files.move(dumping, archive, StandardCopyOption.ATOMIC_MOVE,
                            StandardCopyOption.REPLACE_EXISTING);
                    LOGGER.info("Class-data sharing archive {} written ({} bytes)", archive, Files.size(archive));
                } else {
                    Files.deleteIfExists(dumping);
                }
            } catch (IOException e) {
                LOGGER.warn("Could not publish the class-data sharing archive {}", archive, e);
            }
        }
    }
}
