package io.cairn.metadata;

import io.cairn.wire.protocol.Uuid;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * The initial voter set of a quorum configured with {@code controller.quorum.bootstrap.servers} (KIP-853) instead of
 * a static {@code controller.quorum.voters}: Kafka's storage tool writes it into the metadata log's bootstrap
 * checkpoint ({@code --standalone} or {@code --initial-controllers}); Cairn's writes it into {@value #FILE_NAME} in
 * the metadata log dir, as {@code voters=id@host:port,...} and {@code directory.ids=id:directoryId,...} (the
 * voters' metadata directory ids, KIP-853's voter keys). A controller formatted with {@code --no-initial-controllers}
 * gets {@code join=true} and no voters: it starts outside the quorum and joins it when {@code kafka-metadata-quorum
 * add-controller} adds it. This file is only the start: once the quorum runs, the voter set lives in the Raft
 * configuration of the metadata log (changed by AddRaftVoter and RemoveRaftVoter, kept across restarts).
 * Stateless, thread-safe.
 */
public final class BootstrapVoters {

    /** The file name inside the metadata log dir. */
    public static final String FILE_NAME = "bootstrap-voters.properties";

    /** What a metadata dir was formatted with. */
    public record Formatted(List<MetadataConfig.QuorumVoter> voters, Map<Integer, Uuid> directoryIds) {

        public Formatted {
            voters = List.copyOf(voters);
            directoryIds = Map.copyOf(directoryIds);
        }

        /** True for {@code --no-initial-controllers}: the node joins a running quorum. */
        public boolean joins() {
            return voters.isEmpty();
        }
    }

    private BootstrapVoters() {
    }

    /**
     * The voters formatted into {@code dir}, empty when it has none; an empty list for a controller formatted with
     * {@code --no-initial-controllers}.
     */
    public static Optional<List<MetadataConfig.QuorumVoter>> read(Path dir) throws IOException {
        return readFormatted(dir).map(Formatted::voters);
    }

    /** The voters and their directory ids formatted into {@code dir}, empty when it has none. */
    public static Optional<Formatted> readFormatted(Path dir) throws IOException {
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
        boolean joins = Boolean.parseBoolean(props.getProperty("join", "false"));
        if (voters.isEmpty() && !joins) {
            throw new IOException("No voters in " + dir.resolve(FILE_NAME));
        }
        Map<Integer, Uuid> directoryIds = new LinkedHashMap<>();
        for (String entry : props.getProperty("directory.ids", "").split(",")) {
            if (!entry.isBlank()) {
                int colon = entry.indexOf(':');
                try {
                    directoryIds.put(Integer.parseInt(entry.substring(0, colon).trim()),
                            Uuid.fromString(entry.substring(colon + 1).trim()));
                } catch (RuntimeException e) {
                    throw new IOException("Invalid directory.ids entry '" + entry + "' in " + dir.resolve(FILE_NAME),
                            e);
                }
            }
        }
        return Optional.of(new Formatted(joins ? List.of() : voters, directoryIds));
    }

    /** Writes {@code voters} into {@code dir} atomically (creating the directory), without directory ids. */
    public static void write(Path dir, List<MetadataConfig.QuorumVoter> voters) throws IOException {
        write(dir, voters, Map.of());
    }

    /**
     * Writes {@code voters} and their {@code directoryIds} into {@code dir} atomically (creating the directory); no
     * voters means the node joins a running quorum ({@code --no-initial-controllers}).
     */
    public static void write(Path dir, List<MetadataConfig.QuorumVoter> voters, Map<Integer, Uuid> directoryIds)
            throws IOException {
        Properties props = new Properties();
        props.setProperty("voters", String.join(",", voters.stream().map(Object::toString).toList()));
        if (voters.isEmpty()) {
            props.setProperty("join", "true");
        }
        if (!directoryIds.isEmpty()) {
            props.setProperty("directory.ids", String.join(",", directoryIds.entrySet().stream()
                    .map(e -> e.getKey() + ":" + e.getValue()).toList()));
        }
        PropertiesFiles.write(dir, FILE_NAME, props, voters.isEmpty()
                ? "No initial controller quorum: this controller joins a running one (format --no-initial-controllers)"
                : "The initial controller quorum (format --standalone or --initial-controllers)");
    }
}
