package io.cairn.metadata.config;

import io.cairn.metadata.config.ConfigKey.Mode;
import io.cairn.metadata.config.ConfigKey.Scope;
import io.cairn.metadata.config.ConfigKey.Support;
import io.cairn.metadata.config.ConfigKey.Synonym;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The one table of config keys: every broker and topic key Kafka 4.1.1 defines ({@code KafkaConfig}'s and
 * {@code LogConfig}'s ConfigDefs and the dynamic-only throttle rates) plus Cairn's own keys, each with Kafka's type,
 * default, unit, importance, rule and our documentation, its run-time mode and whether Cairn acts on it. The rows
 * are the resource {@code kafka-configs.tsv} next to this class (its header describes the columns), read once when
 * the class loads; {@code ConfigTableTest} compares them with Kafka's own ConfigDefs. Immutable, thread-safe.
 */
public final class ConfigTable {

    private static final String RESOURCE = "kafka-configs.tsv";
    /**
     * Cairn's defaults where Kafka has none ({@code node.id}, {@code process.roles}: a single combined node starts
     * from an empty file) or another ({@code log.dir}: {@code ./data}, not Kafka's {@code /tmp/kafka-logs}). The
     * broker, the storage tool and DescribeConfigs all take them from here.
     */
    private static final Map<String, String> CAIRN_DEFAULTS = Map.of("node.id", "1",
            "process.roles", "broker,controller", "log.dir", "./data");
    private static final ConfigTable KAFKA = load();

    private final Map<String, ConfigKey> broker;
    private final Map<String, ConfigKey> topic;

    private ConfigTable(Map<String, ConfigKey> broker, Map<String, ConfigKey> topic) {
        this.broker = Collections.unmodifiableMap(broker);
        this.topic = Collections.unmodifiableMap(topic);
    }

    /** The table. */
    public static ConfigTable get() {
        return KAFKA;
    }

    /** The broker key {@code name}, if the table has it. */
    public Optional<ConfigKey> broker(String name) {
        return Optional.ofNullable(broker.get(name));
    }

    /** Cairn's defaults that differ from Kafka's (or stand where Kafka has none), by broker key. */
    public Map<String, String> cairnDefaults() {
        return CAIRN_DEFAULTS;
    }

    /**
     * The value a Cairn node takes for the broker key {@code name} when {@code server.properties} does not set it:
     * Cairn's default where it has one, else Kafka's; null when neither has one.
     *
     * @throws IllegalStateException when the table does not have the key
     */
    public String serverDefault(String name) {
        String cairn = CAIRN_DEFAULTS.get(name);
        if (cairn != null) {
            return cairn;
        }
        return broker(name).orElseThrow(() -> new IllegalStateException(name + " is not in the config table"))
                .defaultValue();
    }

    /** The topic key {@code name}, if the table has it. */
    public Optional<ConfigKey> topic(String name) {
        return Optional.ofNullable(topic.get(name));
    }

    /** Every broker key, sorted by name. */
    public Collection<ConfigKey> brokerKeys() {
        return broker.values();
    }

    /** Every topic key, sorted by name. */
    public Collection<ConfigKey> topicKeys() {
        return topic.values();
    }

    /**
     * The broker keys that are set together with {@code brokerKey} in precedence order ({@code log.retention.ms},
     * {@code .minutes}, {@code .hours}), as Kafka's {@code brokerConfigSynonyms}; just the key itself for most keys.
     */
    public List<String> brokerSynonyms(String brokerKey) {
        for (ConfigKey key : topic.values()) {
            List<String> names = key.synonyms().stream().map(Synonym::brokerKey).toList();
            if (names.size() > 1 && names.contains(brokerKey)) {
                return names;
            }
        }
        return List.of(brokerKey);
    }

    private static ConfigTable load() {
        Map<String, ConfigKey> broker = new TreeMap<>();
        Map<String, ConfigKey> topic = new TreeMap<>();
        try (InputStream in = ConfigTable.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + RESOURCE);
            }
            BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            String line;
            while ((line = reader.readLine()) != null) {
                if (line.isEmpty() || line.startsWith("#")) {
                    continue;
                }
                ConfigKey key = row(line);
                (key.scope() == Scope.BROKER ? broker : topic).put(key.name(), key);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new ConfigTable(broker, topic);
    }

    private static ConfigKey row(String line) {
        String[] c = line.split("\t", -1);
        if (c.length != 11) {
            throw new IllegalStateException(RESOURCE + ": expected 11 columns in " + line);
        }
        String dflt = c[3];
        return new ConfigKey(Scope.valueOf(upper(c[0])), c[1], ConfigType.valueOf(c[2]),
                dflt.equals("<null>") || dflt.equals("<required>") ? null : dflt, dflt.equals("<required>"), c[4],
                c[5], ConfigRule.parse(c[1], c[6]), Mode.valueOf(upper(c[7])), Support.valueOf(upper(c[8])),
                synonyms(c[9]), c[10]);
    }

    private static List<Synonym> synonyms(String text) {
        List<Synonym> synonyms = new ArrayList<>();
        if (text.isEmpty()) {
            return synonyms;
        }
        for (String item : text.split(",")) {
            int star = item.indexOf('*');
            synonyms.add(star < 0 ? new Synonym(item, 1)
                    : new Synonym(item.substring(0, star), Long.parseLong(item.substring(star + 1))));
        }
        return synonyms;
    }

    private static String upper(String column) {
        return column.toUpperCase(Locale.ROOT).replace('-', '_');
    }
}
