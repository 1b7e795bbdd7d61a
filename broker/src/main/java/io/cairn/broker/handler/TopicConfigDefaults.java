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
final class TopicConfigDefaults {

    /** Kafka's ConfigSource ids. */
    static final byte DYNAMIC_TOPIC_CONFIG = 1;
    static final byte DEFAULT_CONFIG = 5;

    private static final String LONG_MAX = Long.toString(Long.MAX_VALUE);
    private static final Map<String, String> DEFAULTS = new TreeMap<>();

    static {
        DEFAULTS.put("cleanup.policy", "delete");
        DEFAULTS.put("compression.gzip.level", "-1");
        DEFAULTS.put("compression.lz4.level", "9");
        DEFAULTS.put("compression.type", "producer");
        DEFAULTS.put("compression.zstd.level", "3");
        DEFAULTS.put("delete.retention.ms", "86400000");
        DEFAULTS.put("file.delete.delay.ms", "60000");
        DEFAULTS.put("flush.messages", LONG_MAX);
        DEFAULTS.put("flush.ms", LONG_MAX);
        DEFAULTS.put("follower.replication.throttled.replicas", "");
        DEFAULTS.put("index.interval.bytes", "4096");
        DEFAULTS.put("leader.replication.throttled.replicas", "");
        DEFAULTS.put("local.retention.bytes", "-2");
        DEFAULTS.put("local.retention.ms", "-2");
        DEFAULTS.put("max.compaction.lag.ms", LONG_MAX);
        DEFAULTS.put("max.message.bytes", "1048588");
        DEFAULTS.put("message.timestamp.after.max.ms", "3600000");
        DEFAULTS.put("message.timestamp.before.max.ms", LONG_MAX);
        DEFAULTS.put("message.timestamp.type", "CreateTime");
        DEFAULTS.put("min.cleanable.dirty.ratio", "0.5");
        DEFAULTS.put("min.compaction.lag.ms", "0");
        DEFAULTS.put("min.insync.replicas", "1");
        DEFAULTS.put("preallocate", "false");
        DEFAULTS.put("remote.log.copy.disable", "false");
        DEFAULTS.put("remote.log.delete.on.disable", "false");
        DEFAULTS.put("remote.storage.enable", "false");
        DEFAULTS.put("retention.bytes", "-1");
        DEFAULTS.put("retention.ms", "604800000");
        DEFAULTS.put("segment.bytes", "1073741824");
        DEFAULTS.put("segment.index.bytes", "10485760");
        DEFAULTS.put("segment.jitter.ms", "0");
        DEFAULTS.put("segment.ms", "604800000");
        DEFAULTS.put("unclean.leader.election.enable", "false");
    }

    private TopicConfigDefaults() {
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
