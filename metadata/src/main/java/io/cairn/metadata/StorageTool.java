package io.cairn.metadata;

import io.cairn.metadata.image.Features;
import io.cairn.metadata.image.ScramCredential;
import io.cairn.wire.protocol.Uuid;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Cairn's {@code kafka-storage.sh}: {@code random-uuid} prints a new cluster id, {@code format --cluster-id ID
 * --config server.properties [--ignore-formatted] [--standalone | --initial-controllers LIST]} (or {@code -t} /
 * {@code -c} / {@code -g} / {@code -s} / {@code -I}) writes {@code meta.properties} into the metadata log dir and every
 * log dir. A controller configured with {@code controller.quorum.bootstrap.servers} (no static
 * {@code controller.quorum.voters}) needs its initial voter set, as Kafka's tool asks: {@code --standalone} makes it
 * the only voter, at its controller listener; {@code --initial-controllers id@host:port:directoryId,...} names every
 * voter, and this node's entry gives its metadata dir's directory id; {@code --no-initial-controllers} formats a
 * controller that joins a running quorum ({@code kafka-metadata-quorum add-controller}). The set is written as
 * {@link BootstrapVoters}, and {@code kraft.version} is finalized at 1 for such a dynamic quorum, 0 for the static
 * {@code controller.quorum.voters}, as Kafka 4.1's formatter does.
 * The feature levels of the new cluster (Kafka 4.1's defaults within what Cairn supports, see
 * {@link io.cairn.metadata.image.Features}) are written as {@link BootstrapFeatures}; {@code --feature name=level}
 * ({@code -f}, repeatable) overrides one, and {@code --release-version} ({@code -r}) accepts only the release whose
 * metadata.version Cairn implements, 4.1 (or 4.1-IV1). {@code --add-scram MECHANISM=[name=...,password=...]}
 * ({@code -S}, repeatable, Kafka's syntax) adds a SCRAM credential the new cluster starts with
 * ({@link BootstrapScram}). Stateless, thread-safe.
 */
public final class StorageTool {

    private static final Logger LOGGER = LogManager.getLogger(StorageTool.class);

    private StorageTool() {
    }

    public static void main(String[] args) {
        int code;
        try {
            code = run(args, System.out);
        } catch (IOException | IllegalArgumentException e) {
            System.err.println("Error: " + e.getMessage());
            code = 1;
        }
        System.exit(code);
    }

    /** Runs the tool; returns the exit code. */
    public static int run(String[] args, PrintStream out) throws IOException {
        if (args.length == 0) {
            out.println("usage: cairn-storage (random-uuid | format --cluster-id ID --config FILE "
                    + "[--ignore-formatted] [--standalone | --initial-controllers id@host:port:dirId,... "
                    + "| --no-initial-controllers] "
                    + "[--release-version 4.1] [--feature name=level ...] "
                    + "[--add-scram 'SCRAM-SHA-256=[name=alice,password=alice-secret]' ...])");
            return 1;
        }
        if (args[0].equals("random-uuid")) {
            out.println(MetaProperties.randomUuid());
            return 0;
        }
        if (!args[0].equals("format")) {
            throw new IllegalArgumentException("Unknown command " + args[0]);
        }
        String clusterId = null;
        Path config = null;
        boolean ignoreFormatted = false;
        boolean standalone = false;
        boolean noInitialControllers = false;
        String initialControllers = null;
        Map<String, Short> features = new LinkedHashMap<>();
        List<ScramCredential> scram = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            switch (args[i]) {
                case "--cluster-id", "-t" -> clusterId = value(args, ++i);
                case "--config", "-c" -> config = Path.of(value(args, ++i));
                case "--ignore-formatted", "-g" -> ignoreFormatted = true;
                case "--standalone", "-s" -> standalone = true;
                case "--initial-controllers", "-I" -> initialControllers = value(args, ++i);
                case "--no-initial-controllers", "-N" -> noInitialControllers = true;
                case "--feature", "-f" -> feature(value(args, ++i), features);
                case "--release-version", "-r" -> releaseVersion(value(args, ++i));
                case "--add-scram", "-S" -> scram.add(BootstrapScram.parse(value(args, ++i)));
                default -> throw new IllegalArgumentException("Unknown argument " + args[i]);
            }
        }
        if (clusterId == null || config == null) {
            throw new IllegalArgumentException("format needs --cluster-id and --config");
        }
        MetadataConfig metadata = MetadataConfig.load(config);
        Optional<InitialVoters> voters = initialVoters(metadata, standalone, initialControllers, noInitialControllers);
        Map<String, Short> levels = kraftVersion(BootstrapFeatures.withOverrides(features), features,
                voters.isPresent());
        return format(metadata, clusterId, ignoreFormatted, voters, levels, scram, out);
    }

    /**
     * The levels with {@code kraft.version} as Kafka 4.1's formatter finalizes it: 1 for a dynamic quorum
     * ({@code --standalone}, {@code --initial-controllers}, {@code --no-initial-controllers}), whose voters change
     * with AddRaftVoter and RemoveRaftVoter; 0 for the static {@code controller.quorum.voters}. A {@code --feature
     * kraft.version} that contradicts the quorum's kind is refused with Kafka's messages.
     */
    static Map<String, Short> kraftVersion(Map<String, Short> levels, Map<String, Short> given, boolean dynamic) {
        Short asked = given.get(Features.KRAFT_VERSION);
        if (dynamic && asked != null && asked < 1) {
            throw new IllegalArgumentException("Cannot set kraft.version to " + asked + " if one of the flags "
                    + "--standalone, --initial-controllers, or --no-initial-controllers is used. For dynamic "
                    + "controllers support, try removing the --feature flag for kraft.version.");
        }
        if (!dynamic && asked != null && asked > 0) {
            throw new IllegalArgumentException("Cannot set kraft.version to " + asked + " unless KIP-853 "
                    + "configuration is present. Try removing the --feature flag for kraft.version.");
        }
        Map<String, Short> result = new LinkedHashMap<>(levels);
        result.put(Features.KRAFT_VERSION, dynamic ? (short) 1 : (short) 0);
        return result;
    }

    /** One {@code --feature name=level}, as Kafka's tool parses it. */
    private static void feature(String text, Map<String, Short> features) {
        int eq = text.indexOf('=');
        if (eq <= 0) {
            throw new IllegalArgumentException("Can't parse feature=level string " + text + ": equals sign not found.");
        }
        String name = text.substring(0, eq).trim();
        try {
            features.put(name, Short.parseShort(text.substring(eq + 1).trim()));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("Can't parse feature=level string " + text + ": unable to parse "
                    + text.substring(eq + 1).trim() + " as a short.", e);
        }
    }

    /** Cairn implements metadata.version 4.1-IV1 only; any other release would be finalized untruthfully. */
    private static void releaseVersion(String release) {
        if (!release.equals("4.1") && !release.equals("4.1-IV1")) {
            throw new IllegalArgumentException("Unsupported release version " + release + ": Cairn implements "
                    + "metadata.version 4.1-IV1 (release 4.1) only");
        }
    }

    private static String value(String[] args, int index) {
        if (index >= args.length) {
            throw new IllegalArgumentException(args[index - 1] + " needs a value");
        }
        return args[index];
    }

    /**
     * The voter set to format, by Kafka's storage-tool rules; empty when the node has static
     * {@code controller.quorum.voters} or is a broker.
     */
    static Optional<InitialVoters> initialVoters(MetadataConfig config, boolean standalone, String initialControllers,
                                                 boolean noInitialControllers) {
        int given = (standalone ? 1 : 0) + (initialControllers != null ? 1 : 0) + (noInitialControllers ? 1 : 0);
        if (given > 1) {
            throw new IllegalArgumentException("Only one of --standalone, --initial-controllers and "
                    + "--no-initial-controllers can be given");
        }
        boolean staticVoters = !config.voters().isEmpty();
        if (staticVoters && (standalone || initialControllers != null || (noInitialControllers
                && config.isController()))) {
            throw new IllegalArgumentException("You cannot specify controller.quorum.voters and format the node "
                    + "with --initial-controllers, --standalone or --no-initial-controllers. If you want to use "
                    + "dynamic quorum, please remove controller.quorum.voters and specify "
                    + "controller.quorum.bootstrap.servers instead.");
        }
        if (noInitialControllers) {
            // Kafka formats such a node with no voter set: it starts outside the quorum, and add-controller adds it.
            return config.isController() ? Optional.of(new InitialVoters(List.of(), Optional.empty(), Map.of()))
                    : Optional.empty();
        }
        if (standalone) {
            Uuid own = MetaProperties.randomUuid();
            MetadataConfig.QuorumVoter self = config.standaloneVoter();
            return Optional.of(new InitialVoters(List.of(self), Optional.of(own), Map.of(self.id(), own)));
        }
        if (initialControllers != null) {
            return Optional.of(InitialVoters.parse(initialControllers, config));
        }
        if (config.isController() && !staticVoters) {
            throw new IllegalArgumentException("Because controller.quorum.voters is not set on this controller, you "
                    + "must specify one of the following: --standalone, --initial-controllers, or "
                    + "--no-initial-controllers.");
        }
        return Optional.empty();
    }

    /**
     * The initial voters of {@code --standalone} or {@code --initial-controllers} (none for
     * {@code --no-initial-controllers}), this node's directory id when the list gives one, and every voter's.
     */
    record InitialVoters(List<MetadataConfig.QuorumVoter> voters, Optional<Uuid> ownDirectoryId,
                         Map<Integer, Uuid> directoryIds) {

        /** Parses Kafka's {@code id@host:port:directoryId,...}; the node being formatted must be one of them. */
        static InitialVoters parse(String text, MetadataConfig config) {
            List<MetadataConfig.QuorumVoter> voters = new ArrayList<>();
            Map<Integer, Uuid> directoryIds = new LinkedHashMap<>();
            Set<Integer> ids = new LinkedHashSet<>();
            Optional<Uuid> own = Optional.empty();
            for (String entry : text.split(",")) {
                String trimmed = entry.trim();
                int last = trimmed.lastIndexOf(':');
                int at = trimmed.indexOf('@');
                if (at <= 0 || last < 0 || trimmed.lastIndexOf(':', last - 1) < at) {
                    throw new IllegalArgumentException("Invalid --initial-controllers entry '" + trimmed
                            + "': expected id@host:port:directoryId");
                }
                MetadataConfig.QuorumVoter voter = MetadataConfig.QuorumVoter.parse(trimmed.substring(0, last));
                Uuid directoryId;
                try {
                    directoryId = Uuid.fromString(trimmed.substring(last + 1));
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("Invalid directory id in --initial-controllers entry '"
                            + trimmed + "'", e);
                }
                if (!ids.add(voter.id())) {
                    throw new IllegalArgumentException("Node " + voter.id() + " appears twice in "
                            + "--initial-controllers");
                }
                if (voter.id() == config.nodeId()) {
                    own = Optional.of(directoryId);
                }
                voters.add(voter);
                directoryIds.put(voter.id(), directoryId);
            }
            if (config.isController() && own.isEmpty()) {
                throw new IllegalArgumentException("This controller (node.id " + config.nodeId() + ") is not one of "
                        + "--initial-controllers " + text);
            }
            config.withVoters(voters);
            return new InitialVoters(List.copyOf(voters), own, directoryIds);
        }
    }

    /** Formats every directory of the node; returns the exit code. */
    public static int format(MetadataConfig config, String clusterId, boolean ignoreFormatted, PrintStream out)
            throws IOException {
        return format(config, clusterId, ignoreFormatted, Optional.empty(), Features.bootstrapLevels(), List.of(),
                out);
    }

    private static int format(MetadataConfig config, String clusterId, boolean ignoreFormatted,
                              Optional<InitialVoters> initialVoters, Map<String, Short> features,
                              List<ScramCredential> scram, PrintStream out) throws IOException {
        Uuid.fromString(clusterId);
        Set<Path> dirs = new LinkedHashSet<>();
        dirs.add(config.metadataLogDir());
        dirs.addAll(config.logDirs());
        for (Path dir : dirs) {
            Optional<MetaProperties> existing = MetaProperties.read(dir);
            if (existing.isPresent()) {
                if (!ignoreFormatted) {
                    throw new IllegalArgumentException("Log directory " + dir + " is already formatted. Use "
                            + "--ignore-formatted to ignore this directory and format the others.");
                }
                out.println("All of the log directories are already formatted: skipping " + dir);
                continue;
            }
            if (Files.isDirectory(dir)) {
                try (var entries = Files.list(dir)) {
                    if (entries.findAny().isPresent()) {
                        throw new IllegalArgumentException("Log directory " + dir + " is not empty and has no "
                                + MetaProperties.FILE_NAME);
                    }
                }
            }
            boolean metadataDir = dir.equals(config.metadataLogDir());
            Uuid directoryId = metadataDir && initialVoters.isPresent() && initialVoters.get().ownDirectoryId()
                    .isPresent() ? initialVoters.get().ownDirectoryId().get() : MetaProperties.randomUuid();
            if (metadataDir && initialVoters.isPresent()) {
                BootstrapVoters.write(dir, initialVoters.get().voters(), initialVoters.get().directoryIds());
                out.println(initialVoters.get().voters().isEmpty()
                        ? "No initial voters in " + dir + ": this controller joins a running quorum (add-controller)"
                        : "Bootstrap voters of " + dir + ": " + initialVoters.get().voters());
            }
            if (metadataDir) {
                BootstrapFeatures.write(dir, features);
                out.println("Bootstrap feature levels of " + dir + ": " + new TreeMap<>(features));
                if (!scram.isEmpty()) {
                    BootstrapScram.write(dir, scram);
                    out.println("Bootstrap SCRAM credentials of " + dir + ": " + scram);
                }
            }
            new MetaProperties(clusterId, config.nodeId(), directoryId).write(dir);
            out.println("Formatting " + dir + " with cluster.id " + clusterId + " and node.id " + config.nodeId());
            LOGGER.info("Formatted {} for cluster {} node {}", dir, clusterId, config.nodeId());
        }
        return 0;
    }
}
