package io.cairn.broker.handler;

import io.cairn.wire.message.CreateTopicsResponseData.CreatableTopicConfigs;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Kafka 4.1's topic-level configs with their default values, and the effective config list of a topic (overrides
 * as DYNAMIC_TOPIC_CONFIG, the rest as DEFAULT_CONFIG) that CreateTopics v5+ returns. Immutable, thread-safe.
 */
public final class TopicConfigDefaults {

    /** Kafka's ConfigSource ids. */
    static final byte DYNAMIC_TOPIC_CONFIG = 1;
    static final byte DEFAULT_CONFIG = 5;

    private static final String LONG_MAX = Long.toString(Long.MAX_VALUE);
    /** Kafka's ConfigType ids (DescribeConfigs v3+). */
    enum Type {
        BOOLEAN(1), STRING(2), INT(3), SHORT(4), LONG(5), DOUBLE(6), LIST(7);

        final byte id;

        Type(int id) {
            this.id = (byte) id;
        }
    }

    private static final Map<String, String> DEFAULTS = new TreeMap<>();
    private static final Map<String, Type> TYPES = new TreeMap<>();

    static {
        define("cleanup.policy", "delete", Type.LIST);
        define("compression.gzip.level", "-1", Type.INT);
        define("compression.lz4.level", "9", Type.INT);
        define("compression.type", "producer", Type.STRING);
        define("compression.zstd.level", "3", Type.INT);
        define("delete.retention.ms", "86400000", Type.LONG);
        define("file.delete.delay.ms", "60000", Type.LONG);
        define("flush.messages", LONG_MAX, Type.LONG);
        define("flush.ms", LONG_MAX, Type.LONG);
        define("follower.replication.throttled.replicas", "", Type.LIST);
        define("index.interval.bytes", "4096", Type.INT);
        define("leader.replication.throttled.replicas", "", Type.LIST);
        define("local.retention.bytes", "-2", Type.LONG);
        define("local.retention.ms", "-2", Type.LONG);
        define("max.compaction.lag.ms", LONG_MAX, Type.LONG);
        define("max.message.bytes", "1048588", Type.INT);
        define("message.timestamp.after.max.ms", "3600000", Type.LONG);
        define("message.timestamp.before.max.ms", LONG_MAX, Type.LONG);
        define("message.timestamp.type", "CreateTime", Type.STRING);
        define("min.cleanable.dirty.ratio", "0.5", Type.DOUBLE);
        define("min.compaction.lag.ms", "0", Type.LONG);
        define("min.insync.replicas", "1", Type.INT);
        define("preallocate", "false", Type.BOOLEAN);
        define("remote.log.copy.disable", "false", Type.BOOLEAN);
        define("remote.log.delete.on.disable", "false", Type.BOOLEAN);
        define("remote.storage.enable", "false", Type.BOOLEAN);
        define("retention.bytes", "-1", Type.LONG);
        define("retention.ms", "604800000", Type.LONG);
        define("segment.bytes", "1073741824", Type.INT);
        define("segment.index.bytes", "10485760", Type.INT);
        define("segment.jitter.ms", "0", Type.LONG);
        define("segment.ms", "604800000", Type.LONG);
        define("unclean.leader.election.enable", "false", Type.BOOLEAN);
    }

    /**
     * Kafka's first broker synonym of a topic config whose default is set (its DEFAULT_CONFIG synonym in
     * DescribeConfigs carries that broker key and the topic's default); topic configs whose first synonym has no
     * default ({@code retention.ms}: {@code log.retention.ms}, {@code segment.ms}: {@code log.roll.ms}, ...) and
     * those without synonyms have none.
     */
    private static final Map<String, String> DEFAULT_SYNONYMS = Map.ofEntries(
            Map.entry("segment.bytes", "log.segment.bytes"),
            Map.entry("segment.index.bytes", "log.index.size.max.bytes"),
            Map.entry("flush.messages", "log.flush.interval.messages"),
            Map.entry("retention.bytes", "log.retention.bytes"),
            Map.entry("max.message.bytes", "message.max.bytes"),
            Map.entry("index.interval.bytes", "log.index.interval.bytes"),
            Map.entry("delete.retention.ms", "log.cleaner.delete.retention.ms"),
            Map.entry("min.compaction.lag.ms", "log.cleaner.min.compaction.lag.ms"),
            Map.entry("max.compaction.lag.ms", "log.cleaner.max.compaction.lag.ms"),
            Map.entry("file.delete.delay.ms", "log.segment.delete.delay.ms"),
            Map.entry("min.cleanable.dirty.ratio", "log.cleaner.min.cleanable.ratio"),
            Map.entry("cleanup.policy", "log.cleanup.policy"),
            Map.entry("unclean.leader.election.enable", "unclean.leader.election.enable"),
            Map.entry("min.insync.replicas", "min.insync.replicas"),
            Map.entry("compression.type", "compression.type"),
            Map.entry("compression.gzip.level", "compression.gzip.level"),
            Map.entry("compression.lz4.level", "compression.lz4.level"),
            Map.entry("compression.zstd.level", "compression.zstd.level"),
            Map.entry("preallocate", "log.preallocate"),
            Map.entry("message.timestamp.type", "log.message.timestamp.type"),
            Map.entry("message.timestamp.before.max.ms", "log.message.timestamp.before.max.ms"),
            Map.entry("message.timestamp.after.max.ms", "log.message.timestamp.after.max.ms"),
            Map.entry("local.retention.ms", "log.local.retention.ms"),
            Map.entry("local.retention.bytes", "log.local.retention.bytes"));

    private TopicConfigDefaults() {
    }

    /** The broker key of a topic config's DEFAULT_CONFIG synonym, or null when Kafka reports none. */
    static String defaultSynonym(String topicKey) {
        return DEFAULT_SYNONYMS.get(topicKey);
    }

    private static void define(String name, String defaultValue, Type type) {
        DEFAULTS.put(name, defaultValue);
        TYPES.put(name, type);
    }

    /** Every topic config name with its default value, sorted by name. */
    public static Map<String, String> defaults() {
        return DEFAULTS;
    }

    /** The type of a topic config (STRING when unknown). */
    static Type type(String name) {
        return TYPES.getOrDefault(name, Type.STRING);
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
