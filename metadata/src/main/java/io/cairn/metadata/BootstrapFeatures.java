package io.cairn.metadata;

import io.cairn.metadata.image.Features;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * The feature levels a new cluster finalizes (Kafka's bootstrap metadata, which its storage tool writes into
 * {@code bootstrap.checkpoint}): {@code cairn-storage format} writes them into {@value #FILE_NAME} in the metadata
 * log dir, one {@code name=level} a line, and the first active controller commits them as feature level records.
 * A metadata dir without the file (formatted before features existed) starts with {@link Features#bootstrapLevels()}.
 * Stateless, thread-safe.
 */
public final class BootstrapFeatures {

    /** The file name inside the metadata log dir. */
    public static final String FILE_NAME = "bootstrap-features.properties";

    private BootstrapFeatures() {
    }

    /** The levels formatted into {@code dir}, or Cairn's defaults when it has none. */
    public static Map<String, Short> read(Path dir) throws IOException {
        Optional<Properties> read = PropertiesFiles.read(dir, FILE_NAME);
        if (read.isEmpty()) {
            return Features.bootstrapLevels();
        }
        Map<String, Short> levels = new LinkedHashMap<>();
        for (String name : read.get().stringPropertyNames()) {
            try {
                levels.put(name, Short.parseShort(read.get().getProperty(name).trim()));
            } catch (NumberFormatException e) {
                throw new IOException("Invalid level of " + name + " in " + dir.resolve(FILE_NAME), e);
            }
        }
        return validate(levels);
    }

    /** Writes {@code levels} into {@code dir} atomically (creating the directory). */
    public static void write(Path dir, Map<String, Short> levels) throws IOException {
        Properties props = new Properties();
        levels.forEach((name, level) -> props.setProperty(name, Short.toString(level)));
        PropertiesFiles.write(dir, FILE_NAME, props, "The feature levels of a new cluster (format)");
    }

    /**
     * Cairn's bootstrap levels with {@code overrides} applied (Kafka's {@code --feature name=level}), each checked
     * against what Cairn supports.
     *
     * @throws IllegalArgumentException for an unknown feature, a level out of range or a missing dependency
     */
    public static Map<String, Short> withOverrides(Map<String, Short> overrides) {
        Map<String, Short> levels = new LinkedHashMap<>(Features.bootstrapLevels());
        levels.putAll(overrides);
        return validate(levels);
    }

    private static Map<String, Short> validate(Map<String, Short> levels) {
        levels.forEach((name, level) -> {
            String invalid = Features.invalidLevel(name, level, levels);
            if (invalid != null) {
                throw new IllegalArgumentException(invalid);
            }
        });
        return Map.copyOf(levels);
    }
}
