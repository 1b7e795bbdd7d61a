package io.cairn.metadata;

import io.cairn.wire.protocol.Uuid;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Properties;
import java.util.UUID;

/**
 * The {@code meta.properties} file Kafka's storage tool writes in every log directory: {@code version=1},
 * {@code cluster.id}, {@code node.id}, {@code directory.id}. Immutable, thread-safe.
 *
 * @param clusterId   the cluster id
 * @param nodeId      the node id
 * @param directoryId the id of this directory
 */
public record MetaProperties(String clusterId, int nodeId, Uuid directoryId) {

    /** The file name inside a log directory. */
    public static final String FILE_NAME = "meta.properties";

    /** Reads the file of a directory, empty when it has none. */
    public static Optional<MetaProperties> read(Path dir) throws IOException {
        Path file = dir.resolve(FILE_NAME);
        Optional<Properties> read = PropertiesFiles.read(dir, FILE_NAME);
        if (read.isEmpty()) {
            return Optional.empty();
        }
        Properties props = read.get();
        String version = props.getProperty("version");
        if (!"1".equals(version)) {
            throw new IOException("Unsupported meta.properties version " + version + " in " + file);
        }
        String clusterId = props.getProperty("cluster.id");
        String nodeId = props.getProperty("node.id");
        if (clusterId == null || nodeId == null) {
            throw new IOException("Incomplete " + file + ": cluster.id and node.id are required");
        }
        String directoryId = props.getProperty("directory.id");
        return Optional.of(new MetaProperties(clusterId, Integer.parseInt(nodeId),
                directoryId == null ? Uuid.ZERO : Uuid.fromString(directoryId)));
    }

    /** Writes the file into {@code dir} atomically (creating the directory). */
    public void write(Path dir) throws IOException {
        Properties props = new Properties();
        props.setProperty("version", "1");
        props.setProperty("cluster.id", clusterId);
        props.setProperty("node.id", Integer.toString(nodeId));
        props.setProperty("directory.id", directoryId.toString());
        PropertiesFiles.write(dir, FILE_NAME, props, null);
    }

    /** A random id in Kafka's format (base64 of a random UUID, never ZERO or ONE). */
    public static Uuid randomUuid() {
        while (true) {
            UUID uuid = UUID.randomUUID();
            Uuid id = new Uuid(uuid.getMostSignificantBits(), uuid.getLeastSignificantBits());
            if (!id.equals(Uuid.ZERO) && !id.equals(Uuid.ONE) && !id.toString().startsWith("-")) {
                return id;
            }
        }
    }
}
