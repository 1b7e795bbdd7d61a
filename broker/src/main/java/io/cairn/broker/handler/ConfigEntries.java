package io.cairn.broker.handler;

import io.cairn.broker.config.BrokerConfig;
import io.cairn.metadata.config.ConfigKey;
import io.cairn.metadata.config.ConfigTable;
import io.cairn.wire.message.DescribeConfigsResponseData.DescribeConfigsResourceResult;
import io.cairn.wire.message.DescribeConfigsResponseData.DescribeConfigsSynonym;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The config entries DescribeConfigs returns for a topic or a broker, from {@link ConfigTable} and the broker's
 * static, cluster-default and per-broker dynamic configs, as Kafka's {@code ConfigHelper} builds them: the value, the
 * source (the first synonym's), the synonyms in precedence order (per-broker dynamic, cluster default, static,
 * default; for each of those the key's synonym group, {@code log.retention.ms}, {@code .minutes}, {@code .hours}),
 * Kafka's type, read-only (not dynamic), sensitive (passwords, whose values are never shown) and, on request, the
 * documentation. Immutable, thread-safe.
 */
final class ConfigEntries {

    static final byte TOPIC_CONFIG = 1;
    static final byte DYNAMIC_BROKER_CONFIG = 2;
    static final byte DYNAMIC_DEFAULT_BROKER_CONFIG = 3;
    static final byte STATIC_BROKER_CONFIG = 4;
    static final byte DEFAULT_CONFIG = 5;

    private static final String BROKER_ID = "broker.id";
    private static final String NODE_ID = "node.id";

    private final ConfigTable table = ConfigTable.get();
    private final Map<String, String> staticConfigs;
    private final Map<String, String> cairnDefaults;
    private final Map<String, String> defaults;

    /**
     * @param staticConfigs the broker's server.properties (and overrides)
     * @param cairnDefaults Cairn's defaults that differ from the table's
     */
    ConfigEntries(Map<String, String> staticConfigs, Map<String, String> cairnDefaults) {
        Map<String, String> statics = new TreeMap<>(staticConfigs);
        if (!statics.containsKey(BROKER_ID) && statics.containsKey(NODE_ID)) {
            // Kafka's KafkaConfig sets broker.id to node.id, so it shows as a static setting
            statics.put(BROKER_ID, statics.get(NODE_ID));
        }
        this.staticConfigs = Map.copyOf(statics);
        this.cairnDefaults = Map.copyOf(cairnDefaults);
        // the DEFAULT_CONFIG synonyms: Kafka's defaults, or Cairn's where Kafka has one too (a key Kafka requires
        // has no default synonym, as on Kafka, nor has a dynamic-only key, which is outside KafkaConfig)
        Map<String, String> all = new TreeMap<>();
        table.brokerKeys().stream().filter(k -> k.defaultValue() != null && k.mode() != ConfigKey.Mode.DYNAMIC_ONLY)
                .forEach(k -> all.put(k.name(), cairnDefaults.getOrDefault(k.name(), k.defaultValue())));
        this.defaults = Map.copyOf(all);
    }

    /** The broker's configs for {@code dynamic} (this broker's dynamic configs) and {@code clusterDefaults}. */
    List<DescribeConfigsResourceResult> broker(Map<String, String> dynamic, Map<String, String> clusterDefaults,
                                               boolean includeSynonyms, boolean includeDocumentation) {
        Set<String> names = new TreeSet<>(staticConfigs.keySet());
        names.addAll(clusterDefaults.keySet());
        names.addAll(dynamic.keySet());
        table.brokerKeys().stream().filter(k -> k.described() && k.mode() != ConfigKey.Mode.DYNAMIC_ONLY)
                .forEach(k -> names.add(k.name()));
        List<DescribeConfigsResourceResult> entries = new ArrayList<>();
        for (String name : names) {
            String value = firstNonNull(dynamic.get(name), clusterDefaults.get(name), staticConfigs.get(name),
                    cairnDefaults.get(name), defaults.get(name));
            List<DescribeConfigsSynonym> synonyms = synonyms(name, brokerSynonyms(name), sensitive(name),
                    dynamic, clusterDefaults);
            entries.add(brokerEntry(name, value, synonyms, includeSynonyms, includeDocumentation));
        }
        return entries;
    }

    /**
     * Kafka's {@code brokerConfigSynonyms}: a per-listener key ({@code listener.name.<l>.ssl.keystore.location})
     * and the key it overrides, else the key's synonym group.
     */
    private List<String> brokerSynonyms(String name) {
        String base = BrokerConfig.withoutListenerPrefix(name);
        return base.equals(name) ? table.brokerSynonyms(name) : List.of(name, base);
    }

    /** The table's key of {@code name}, or of the key a per-listener key overrides (Kafka's {@code configType}). */
    private Optional<ConfigKey> brokerKey(String name) {
        return table.broker(name).or(() -> table.broker(BrokerConfig.withoutListenerPrefix(name)));
    }

    /** The cluster-default resource ({@code ""}): just the dynamic defaults. */
    List<DescribeConfigsResourceResult> clusterDefaults(Map<String, String> clusterDefaults, boolean includeSynonyms,
                                                        boolean includeDocumentation) {
        List<DescribeConfigsResourceResult> entries = new ArrayList<>();
        new TreeMap<>(clusterDefaults).forEach((name, value) -> {
            List<DescribeConfigsSynonym> synonyms = synonyms(name, brokerSynonyms(name), sensitive(name),
                    Map.of(), clusterDefaults).stream().filter(s -> s.source() == DYNAMIC_DEFAULT_BROKER_CONFIG)
                    .toList();
            entries.add(brokerEntry(name, value, synonyms, includeSynonyms, includeDocumentation));
        });
        return entries;
    }

    /** Kafka's {@code maybeSensitive}: a password (a per-listener key: its key's type), or an unknown key. */
    private boolean sensitive(String name) {
        return brokerKey(name).map(ConfigKey::sensitive).orElse(true);
    }

    /**
     * A broker entry: read-only unless dynamic (a per-listener key always, as Kafka lists only the keys themselves as
     * dynamic), Kafka's type (a per-listener key: its key's; UNKNOWN for a key outside the table).
     */
    private DescribeConfigsResourceResult brokerEntry(String name, String value, List<DescribeConfigsSynonym> synonyms,
                                                      boolean includeSynonyms, boolean includeDocumentation) {
        Optional<ConfigKey> exact = table.broker(name);
        Optional<ConfigKey> key = brokerKey(name);
        boolean sensitive = sensitive(name);
        return entry(name, sensitive ? null : value, sensitive, synonyms, includeSynonyms)
                .setReadOnly(exact.map(ConfigKey::readOnly).orElse(true))
                .setConfigType(key.map(k -> k.type().id()).orElse((byte) 0))
                .setDocumentation(includeDocumentation ? exact.map(ConfigKey::documentation).orElse(null) : null);
    }

    /**
     * A topic's configs: its {@code overrides}, else the broker synonym that wins (converted to the topic's unit),
     * else the topic default.
     */
    List<DescribeConfigsResourceResult> topic(Map<String, String> overrides, Map<String, String> dynamic,
                                              Map<String, String> clusterDefaults, boolean includeSynonyms,
                                              boolean includeDocumentation) {
        Map<String, String> brokerValues = new TreeMap<>(staticConfigs);
        brokerValues.putAll(clusterDefaults);
        brokerValues.putAll(dynamic);
        List<DescribeConfigsResourceResult> entries = new ArrayList<>();
        for (ConfigKey key : table.topicKeys()) {
            if (!key.described()) {
                continue;
            }
            String value = overrides.containsKey(key.name()) ? overrides.get(key.name())
                    : brokerDefault(key, brokerValues).orElse(key.defaultValue());
            List<DescribeConfigsSynonym> synonyms = new ArrayList<>();
            if (overrides.containsKey(key.name())) {
                synonyms.add(synonym(key.name(), value, TOPIC_CONFIG));
            }
            if (!key.synonyms().isEmpty()) {
                List<String> group = key.synonyms().stream().map(ConfigKey.Synonym::brokerKey).toList();
                synonyms.addAll(synonyms(group.get(0), group, key.sensitive(), dynamic, clusterDefaults));
            }
            entries.add(entry(key.name(), value, key.sensitive(), synonyms, includeSynonyms).setReadOnly(false)
                    .setConfigType(key.type().id()).setDocumentation(includeDocumentation ? key.documentation()
                    : null));
        }
        return entries;
    }

    /** The value the broker gives a topic key: its first synonym set anywhere, converted. */
    private static Optional<String> brokerDefault(ConfigKey key, Map<String, String> brokerValues) {
        for (ConfigKey.Synonym s : key.synonyms()) {
            String value = brokerValues.get(s.brokerKey());
            if (value != null) {
                return Optional.of(s.factor() == 1 ? value.trim()
                        : Long.toString(Long.parseLong(value.trim()) * s.factor()));
            }
        }
        return Optional.empty();
    }

    /** Kafka's {@code configSynonyms}: each source in turn, the group within it, from {@code name} on. */
    private List<DescribeConfigsSynonym> synonyms(String name, List<String> group, boolean sensitive,
                                                  Map<String, String> dynamic, Map<String, String> clusterDefaults) {
        List<DescribeConfigsSynonym> all = new ArrayList<>();
        addFrom(all, group, dynamic, DYNAMIC_BROKER_CONFIG, sensitive);
        addFrom(all, group, clusterDefaults, DYNAMIC_DEFAULT_BROKER_CONFIG, sensitive);
        addFrom(all, group, staticConfigs, STATIC_BROKER_CONFIG, sensitive);
        addFrom(all, group, defaults, DEFAULT_CONFIG, sensitive);
        int first = 0;
        while (first < all.size() && !all.get(first).name().equals(name)) {
            first++;
        }
        return new ArrayList<>(all.subList(first, all.size()));
    }

    private static void addFrom(List<DescribeConfigsSynonym> all, List<String> group, Map<String, String> values,
                                byte source, boolean sensitive) {
        for (String key : group) {
            String value = values.get(key);
            if (value != null) {
                all.add(synonym(key, sensitive ? null : value, source));
            }
        }
    }

    private static DescribeConfigsSynonym synonym(String name, String value, byte source) {
        return new DescribeConfigsSynonym().setName(name).setValue(value).setSource(source);
    }

    private static DescribeConfigsResourceResult entry(String name, String value, boolean sensitive,
                                                       List<DescribeConfigsSynonym> synonyms, boolean includeSynonyms) {
        return new DescribeConfigsResourceResult().setName(name).setValue(value)
                .setConfigSource(synonyms.isEmpty() ? DEFAULT_CONFIG : synonyms.get(0).source())
                .setIsSensitive(sensitive)
                .setSynonyms(includeSynonyms ? synonyms : new ArrayList<>());
    }

    @SafeVarargs
    private static <T> T firstNonNull(T... values) {
        for (T value : values) {
            if (value != null) {
                return value;
            }
        }
        return null;
    }
}
