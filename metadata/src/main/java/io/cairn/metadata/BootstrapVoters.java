package io.cairn.metadata;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;

/**
 * The initial voter set of a quorum configured with {@code controller.quorum.bootstrap.servers} (KIP-853) instead of
 * a static {@code controller.quorum.voters}: Kafka's storage tool writes it into the metadata log's bootstrap
 * checkpoint ({@code --standalone} or {@code --initial-controllers}); Cairn's writes it into
 * {@value #FILE_NAME} in the metadata log dir, as {@code voters=id@host:port,...}. The voters are fixed from then on
 * (Cairn does not add or remove voters at run time). Stateless, thread-safe.
 */
public final class BootstrapVoters {

    /** The file name inside the metadata log dir. */
    public static final String FILE_NAME = "bootstrap-voters.properties";

    private BootstrapVoters() {
    }

    /** The voters formatted into {@code dir}, empty when it has none. */
    public static Optional<List<MetadataConfig.QuorumVoter>> read(Path dir) throws IOException {
        Optional<Properties> read = PropertiesFiles.read(dir, FILE_NAME);
        if (read.isEmpty()) {
            return Optional.empty();
        }
        Properties props = read.get();
        List<MetadataConfig.QuorumVoter> voters = new ArrayList<>();
        for (String entry : props.getProperty("voters", "").split(",")) {
            if (!entry.isBlank()) {
                voters.add(MetadataConfig.QuorumVoter.parse(entry));
            }
        }
        if (voters.isEmpty()) {
            throw new IOException("No voters in " + dir.resolve(FILE_NAME));
        }
        return Optional.of(List.copyOf(voters));
    }

    /** Writes {@code voters} into {@code dir} atomically (creating the directory). */
    public static void write(Path dir, List<MetadataConfig.QuorumVoter> voters) throws IOException {
        Properties props = new Properties();
        props.setProperty("voters", String.join(",", voters.stream().map(Object::toString).toList()));
        PropertiesFiles.write(dir, FILE_NAME, props,
                "The initial controller quorum (format --standalone or --initial-controllers)");
    }
}
