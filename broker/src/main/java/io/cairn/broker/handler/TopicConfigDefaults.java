package io.cairn.broker.handler;

import io.cairn.metadata.config.ConfigKey;
import io.cairn.metadata.config.ConfigTable;
import io.cairn.wire.message.CreateTopicsResponseData.CreatableTopicConfigs;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Kafka 4.1's topic-level configs with their default values (the described topic rows of {@link ConfigTable}), and
 * the effective config list of a topic (overrides as DYNAMIC_TOPIC_CONFIG, the rest as DEFAULT_CONFIG) that
 * CreateTopics v5+ returns. Immutable, thread-safe.
 */
public final class TopicConfigDefaults {

    /** Kafka's ConfigSource ids. */
    static final byte DYNAMIC_TOPIC_CONFIG = 1;
    static final byte DEFAULT_CONFIG = 5;

    private static final Map<String, String> DEFAULTS = defaultsOf(ConfigTable.get());

    private TopicConfigDefaults() {
    }

    private static Map<String, String> defaultsOf(ConfigTable table) {
        Map<String, String> defaults = new TreeMap<>();
        for (ConfigKey key : table.topicKeys()) {
            if (key.described()) {
                defaults.put(key.name(), key.defaultValue() == null ? "" : key.defaultValue());
            }
        }
        return Collections.unmodifiableMap(defaults);
    }

    /** Every topic config name with its default value, sorted by name. */
    public static Map<String, String> defaults() {
        return DEFAULTS;
    }

    /** Every topic config, sorted by name, with {@code overrides} applied. */
    static List<CreatableTopicConfigs> effective(Map<String, String> overrides) {
        Map<String, String> names = new TreeMap<>(DEFAULTS);
        names.putAll(overrides);
        List<CreatableTopicConfigs> configs = new ArrayList<>(names.size());
        names.forEach((name, value) -> configs.add(new CreatableTopicConfigs().setName(name).setValue(value)
                .setReadOnly(false).setIsSensitive(false)
                .setConfigSource(overrides.containsKey(name) ? DYNAMIC_TOPIC_CONFIG : DEFAULT_CONFIG)));
        return configs;
    }
}
