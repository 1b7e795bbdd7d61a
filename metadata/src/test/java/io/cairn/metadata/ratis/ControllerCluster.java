package io.cairn.metadata.ratis;

import io.cairn.metadata.MetadataConfig;
import io.cairn.metadata.MetadataNodeMain;
import io.cairn.metadata.StorageTool;
import io.cairn.metadata.TestRequests;
import java.io.IOException;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;

/** Controller processes on loopback for the quorum tests: formats, starts (separate JVMs), kills by PID. */
final class ControllerCluster implements AutoCloseable {

    private final Path root;
    private final String clusterId;
    private final Map<Integer, Integer> ports = new LinkedHashMap<>();
    private final Map<Integer, Process> processes = new LinkedHashMap<>();
    private final long electionTimeoutMs;

    ControllerCluster(Path root, String clusterId, int voters, long electionTimeoutMs) throws IOException {
        this.root = root;
        this.clusterId = clusterId;
        this.electionTimeoutMs = electionTimeoutMs;
        for (int id = 1; id <= voters; id++) {
            ports.put(id, TestRequests.freePort());
        }
        for (int id : ports.keySet()) {
            Path props = writeProperties(id, Map.of("process.roles", "controller"));
            StorageTool.format(MetadataConfig.load(props), clusterId, false, new PrintStream(
                    java.io.OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8));
        }
    }

    String voters() {
        List<String> entries = new ArrayList<>();
        ports.forEach((id, port) -> entries.add(id + "@localhost:" + port));
        return String.join(",", entries);
    }

    /** The properties of a node of this cluster (controller or listener), written to its own directory. */
    Path writeProperties(int nodeId, Map<String, String> extra) throws IOException {
        Path dir = root.resolve("node-" + nodeId);
        Files.createDirectories(dir);
        Properties props = new Properties();
        props.setProperty("node.id", Integer.toString(nodeId));
        props.setProperty("controller.quorum.voters", voters());
        props.setProperty("metadata.log.dir", dir.resolve("metadata").toString());
        props.setProperty("log.dirs", dir.resolve("metadata").toString());
        props.setProperty("controller.quorum.election.timeout.ms", Long.toString(electionTimeoutMs));
        props.setProperty("broker.session.timeout.ms", "6000");
        props.putAll(extra);
        Path file = dir.resolve("server.properties");
        try (Writer writer = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            props.store(writer, null);
        }
        return file;
    }

    void format(Path properties) throws IOException {
        StorageTool.format(MetadataConfig.load(properties), clusterId, false, new PrintStream(
                java.io.OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8));
    }

    /**
     * Starts every controller and waits until each has printed {@code STARTED <id>}. A controller whose port was
     * taken between the free-port probe and its bind (an outgoing connection can take any ephemeral port) exits at
     * once; it is started again on the same port, a few times at most.
     */
    void startAll() throws IOException, InterruptedException {
        for (int id : ports.keySet()) {
            start(id);
        }
        for (int id : ports.keySet()) {
            for (int attempt = 1; !awaitStarted(id); attempt++) {
                if (attempt == 5) {
                    throw new IllegalStateException("Controller " + id + " did not start, see "
                            + root.resolve("node-" + id).resolve("process.log"));
                }
                start(id);
            }
        }
    }

    /**
     * Whether controller {@code id} printed its started line; false when its main failed first (the process may
     * linger on non-daemon threads, so it is killed by PID).
     */
    private boolean awaitStarted(int id) throws IOException, InterruptedException {
        Process process = processes.get(id);
        Path log = root.resolve("node-" + id).resolve("process.log");
        String started = "STARTED " + id;
        String failed = "Exception in thread \"main\"";
        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(100))
                .until(() -> !process.isAlive() || logContains(log, started) || logContains(log, failed));
        if (process.isAlive() && logContains(log, started)) {
            return true;
        }
        kill(id);
        // keep the failed start's output apart, so the next attempt's log is read from its beginning
        Files.move(log, log.resolveSibling("process-failed-start-" + System.nanoTime() + ".log"));
        return false;
    }

    private static boolean logContains(Path log, String text) throws IOException {
        return Files.exists(log) && Files.readString(log, StandardCharsets.ISO_8859_1).contains(text);
    }

    void start(int id) throws IOException {
        Path dir = root.resolve("node-" + id);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder builder = new ProcessBuilder(java, "-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), MetadataNodeMain.class.getName(),
                dir.resolve("server.properties").toString());
        builder.redirectErrorStream(true);
        builder.redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("process.log").toFile()));
        processes.put(id, builder.start());
    }

    /** kill -9 of the node's process, by PID. */
    void kill(int id) throws InterruptedException {
        Process process = processes.remove(id);
        if (process != null) {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
    }

    long pid(int id) {
        return processes.get(id).pid();
    }

    @Override
    public void close() throws InterruptedException {
        for (int id : new ArrayList<>(processes.keySet())) {
            kill(id);
        }
    }
}
