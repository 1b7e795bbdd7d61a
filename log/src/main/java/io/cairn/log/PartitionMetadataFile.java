package io.cairn.log;

import io.cairn.log.io.CheckpointFile;
import io.cairn.log.io.FileLayer;
import io.cairn.wire.protocol.Uuid;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * The {@code partition.metadata} file: the topic id of the partition, in Kafka's format
 * ({@code "version: 0\ntopic_id: <base64 uuid>\n"}), so a recreated topic with the same name is never mistaken for
 * the old one. Stateless and thread-safe.
 */
public final class PartitionMetadataFile {

    public static final String FILE_NAME = "partition.metadata";

    private PartitionMetadataFile() {
    }

    public static void write(FileLayer layer, Path dir, Uuid topicId) {
        CheckpointFile.write(layer, dir.resolve(FILE_NAME), "version: 0\ntopic_id: " + topicId + "\n");
    }

    /** The topic id, or empty when the file is missing. */
    public static Optional<Uuid> read(Path dir) {
        Path file = dir.resolve(FILE_NAME);
        if (!Files.exists(file)) {
            return Optional.empty();
        }
        try {
            List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            if (lines.size() < 2 || !lines.get(0).trim().equals("version: 0")
                || !lines.get(1).startsWith("topic_id: ")) {
                throw new IllegalStateException("malformed " + file);
            }
            return Optional.of(Uuid.fromString(lines.get(1).substring("topic_id: ".length()).trim()));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }
}
