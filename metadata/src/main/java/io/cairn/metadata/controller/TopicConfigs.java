package io.cairn.metadata.controller;

import io.cairn.metadata.config.ConfigKey;
import io.cairn.metadata.config.ConfigTable;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The topic-level configs Kafka 4.1 knows (the topic rows of {@link ConfigTable} that Kafka describes), checked
 * with their types and rules and producing Kafka's INVALID_CONFIG messages ({@code Invalid value X for
 * configuration Y: ...}, {@code Unknown topic config name: Y}). Stateless, thread-safe.
 */
public final class TopicConfigs {

    private static final Set<String> NAMES = names(ConfigTable.get());

    private TopicConfigs() {
    }

    private static Set<String> names(ConfigTable table) {
        Set<String> names = new TreeSet<>();
        table.topicKeys().stream().filter(ConfigKey::described).forEach(key -> names.add(key.name()));
        return Set.copyOf(names);
    }

    /** The names of every known topic config. */
    public static Set<String> names() {
        return NAMES;
    }

    /** Kafka's message for the first invalid entry of {@code configs}, or empty when all are valid. */
    public static Optional<String> validate(Map<String, String> configs) {
        for (Map.Entry<String, String> entry : new TreeMap<>(configs).entrySet()) {
            Optional<String> error = validate(entry.getKey(), entry.getValue());
            if (error.isPresent()) {
                return error;
            }
        }
        return Optional.empty();
    }

    /** Kafka's message when {@code value} is not valid for {@code name}, or empty when it is. */
    public static Optional<String> validate(String name, String value) {
        if (!NAMES.contains(name)) {
            return Optional.of("Unknown topic config name: " + name);
        }
        if (value == null) {
            return Optional.of("Null value not supported for topic configs: " + name);
        }
        return ConfigTable.get().topic(name).orElseThrow().validate(value);
    }
}
