package io.cairn.metadata.config;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;

/**
 * The parsed {@code server.properties} of a node: the one reader of the file, which both the broker's
 * {@code BrokerConfig} and the metadata node's {@code MetadataConfig} (and so {@code cairn-storage format}) build
 * from, so that the two never resolve a key or a default differently. Values are trimmed; unset keys take
 * {@link ConfigTable#serverDefault}. Immutable, thread-safe.
 */
public final class ServerProperties {

    public static final String LOG_DIRS = "log.dirs";
    public static final String LOG_DIR = "log.dir";

    private final Map<String, String> values;

    private ServerProperties(Map<String, String> values) {
        this.values = Collections.unmodifiableMap(new TreeMap<>(values));
    }

    /**
     * Reads {@code file} (when not null) and applies {@code overrides} on top, as {@code kafka-server-start.sh
     * server.properties --override k=v} does.
     */
    public static ServerProperties load(Path file, Map<String, String> overrides) throws IOException {
        Map<String, String> props = new TreeMap<>();
        if (file != null) {
            Properties properties = new Properties();
            try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                properties.load(reader);
            }
            for (String name : properties.stringPropertyNames()) {
                props.put(name, properties.getProperty(name).trim());
            }
        }
        props.putAll(overrides);
        return new ServerProperties(props);
    }

    /** The properties of an in-memory {@code server.properties}. */
    public static ServerProperties of(Map<?, ?> source) {
        Map<String, String> props = new TreeMap<>();
        source.forEach((key, value) -> props.put(String.valueOf(key), String.valueOf(value)));
        return new ServerProperties(props);
    }

    /** Every key set, with its value as given, sorted by key. */
    public Map<String, String> originals() {
        return values;
    }

    /** The value set for {@code key}, or null. */
    public String get(String key) {
        return values.get(key);
    }

    /** The value of {@code key}, trimmed, or its {@link ConfigTable#serverDefault} (null when it has none). */
    public String value(String key) {
        String value = values.get(key);
        return value == null ? ConfigTable.get().serverDefault(key) : value.trim();
    }

    /**
     * Kafka's message for the first set value (by key) that fails its key's type or rule in the table, as Kafka's
     * {@code ConfigDef} checks them; empty when every value passes.
     */
    public Optional<String> firstInvalid() {
        for (Map.Entry<String, String> e : values.entrySet()) {
            Optional<String> message = ConfigTable.get().broker(e.getKey()).flatMap(key -> key.validate(e.getValue()));
            if (message.isPresent()) {
                return message;
            }
        }
        return Optional.empty();
    }

    /** The key the log directories come from: {@code log.dirs} when set, else {@code log.dir}. */
    public String logDirsKey() {
        return values.get(LOG_DIRS) != null ? LOG_DIRS : LOG_DIR;
    }

    /**
     * The log directories: {@code log.dirs}, else {@code log.dir}, else Cairn's {@code ./data}.
     *
     * @throws IllegalArgumentException with Kafka's wording when the value names none
     */
    public List<Path> logDirs() {
        String key = logDirsKey();
        String value = value(key);
        List<Path> dirs = new ArrayList<>();
        for (String dir : value.split(",")) {
            if (!dir.isBlank()) {
                dirs.add(Path.of(dir.trim()));
            }
        }
        if (dirs.isEmpty()) {
            throw new IllegalArgumentException("Invalid value " + value + " for configuration " + key
                    + ": at least one log directory is required");
        }
        return List.copyOf(dirs);
    }
}
