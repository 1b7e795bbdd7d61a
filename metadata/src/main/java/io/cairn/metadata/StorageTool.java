package io.cairn.metadata;

import io.cairn.wire.protocol.Uuid;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Optional;
import java.util.Set;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Cairn's {@code kafka-storage.sh}: {@code random-uuid} prints a new cluster id, {@code format --cluster-id ID
 * --config server.properties [--ignore-formatted]} (or {@code -t} / {@code -c} / {@code -g}) writes
 * {@code meta.properties} into the metadata log dir and every log dir. Stateless, thread-safe.
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
                    + "[--ignore-formatted])");
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
        for (int i = 1; i < args.length; i++) {
            switch (args[i]) {
                case "--cluster-id", "-t" -> clusterId = args[++i];
                case "--config", "-c" -> config = Path.of(args[++i]);
                case "--ignore-formatted", "-g" -> ignoreFormatted = true;
                default -> throw new IllegalArgumentException("Unknown argument " + args[i]);
            }
        }
        if (clusterId == null || config == null) {
            throw new IllegalArgumentException("format needs --cluster-id and --config");
        }
        return format(MetadataConfig.load(config), clusterId, ignoreFormatted, out);
    }

    /** Formats every directory of the node; returns the exit code. */
    public static int format(MetadataConfig config, String clusterId, boolean ignoreFormatted, PrintStream out)
            throws IOException {
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
            new MetaProperties(clusterId, config.nodeId(), MetaProperties.randomUuid()).write(dir);
            out.println("Formatting " + dir + " with cluster.id " + clusterId + " and node.id " + config.nodeId());
            LOGGER.info("Formatted {} for cluster {} node {}", dir, clusterId, config.nodeId());
        }
        return 0;
    }
}
