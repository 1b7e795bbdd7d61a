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
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

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

    void startAll() throws IOException {
        for (int id : ports.keySet()) {
            start(id);
        }
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
