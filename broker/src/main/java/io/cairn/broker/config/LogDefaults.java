package io.cairn.broker.config;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The broker keys that set the defaults of topic configs (Kafka's {@code LogConfig} synonyms:
 * {@code log.segment.bytes} for {@code segment.bytes}, {@code log.retention.hours} for {@code retention.ms}, ...),
 * parsed and validated with the rest of {@code server.properties}.
 *
 * <p>Stateless and thread-safe.
 */
public final class LogDefaults {

    /** A broker key, the topic config it defaults, and the factor from the broker unit to the topic's. */
    private record Synonym(String brokerKey, String topicKey, long factor, boolean numeric) {
    }

    /** Later entries of one topic key win over earlier ones, as Kafka prefers ms over minutes over hours. */
    private static final Synonym[] SYNONYMS = {
        new Synonym("log.segment.bytes", "segment.bytes", 1, true),
        new Synonym("log.roll.hours", "segment.ms", 3_600_000L, true),
        new Synonym("log.roll.ms", "segment.ms", 1, true),
        new Synonym("log.roll.jitter.hours", "segment.jitter.ms", 3_600_000L, true),
        new Synonym("log.roll.jitter.ms", "segment.jitter.ms", 1, true),
        new Synonym("log.index.size.max.bytes", "segment.index.bytes", 1, true),
        new Synonym("log.index.interval.bytes", "index.interval.bytes", 1, true),
        new Synonym("message.max.bytes", "max.message.bytes", 1, true),
        new Synonym("log.flush.interval.messages", "flush.messages", 1, true),
        // Kafka's KafkaConfig.logFlushIntervalMs: log.flush.interval.ms, else log.flush.scheduler.interval.ms
        new Synonym("log.flush.scheduler.interval.ms", "flush.ms", 1, true),
        new Synonym("log.flush.interval.ms", "flush.ms", 1, true),
        new Synonym("log.retention.hours", "retention.ms", 3_600_000L, true),
        new Synonym("log.retention.minutes", "retention.ms", 60_000L, true),
        new Synonym("log.retention.ms", "retention.ms", 1, true),
        new Synonym("log.retention.bytes", "retention.bytes", 1, true),
        new Synonym("log.cleanup.policy", "cleanup.policy", 1, false),
        new Synonym("log.cleaner.delete.retention.ms", "delete.retention.ms", 1, true),
        new Synonym("log.cleaner.min.compaction.lag.ms", "min.compaction.lag.ms", 1, true),
        new Synonym("log.cleaner.min.cleanable.ratio", "min.cleanable.dirty.ratio", 1, false),
        new Synonym("log.segment.delete.delay.ms", "file.delete.delay.ms", 1, true),
        new Synonym("log.message.timestamp.type", "message.timestamp.type", 1, false),
        new Synonym("log.message.timestamp.after.max.ms", "message.timestamp.after.max.ms", 1, true),
        new Synonym("log.message.timestamp.before.max.ms", "message.timestamp.before.max.ms", 1, true),
        new Synonym("min.insync.replicas", "min.insync.replicas", 1, true),
        new Synonym("compression.type", "compression.type", 1, false),
        new Synonym("compression.gzip.level", "compression.gzip.level", 1, true),
        new Synonym("compression.lz4.level", "compression.lz4.level", 1, true),
        new Synonym("compression.zstd.level", "compression.zstd.level", 1, true),
    };

    private LogDefaults() {
    }

    /** Every broker key read here. */
    public static Set<String> brokerKeys() {
        Set<String> keys = new HashSet<>();
        for (Synonym s : SYNONYMS) {
            keys.add(s.brokerKey());
        }
        return Set.copyOf(keys);
    }

    /**
     * The topic-config defaults set by {@code props}: topic key to value, with hours and minutes turned into ms.
     *
     * @throws ConfigException when a numeric value does not parse
     */
    static Map<String, String> topicDefaults(Map<String, String> props) {
        return resolve(props, false);
    }

    /** For each topic default {@code props} sets, the broker key it came from (the one that won). */
    static Map<String, String> topicDefaultSources(Map<String, String> props) {
        return resolve(props, true);
    }

    private static Map<String, String> resolve(Map<String, String> props, boolean sources) {
        Map<String, String> defaults = new LinkedHashMap<>();
        for (Synonym s : SYNONYMS) {
            String value = props.get(s.brokerKey());
            if (value == null) {
                continue;
            }
            String converted = value.trim();
            if (s.numeric()) {
                try {
                    converted = Long.toString(Math.multiplyExact(Long.parseLong(converted), s.factor()));
                } catch (NumberFormatException | ArithmeticException e) {
                    throw ConfigException.invalid(s.brokerKey(), value, "not a number in range");
                }
            }
            defaults.put(s.topicKey(), sources ? s.brokerKey() : converted);
        }
        return Map.copyOf(defaults);
    }
}
