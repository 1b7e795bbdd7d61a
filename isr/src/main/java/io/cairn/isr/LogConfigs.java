package io.cairn.isr;

import io.cairn.log.LogConfig;
import io.cairn.metadata.config.ConfigKey;
import io.cairn.metadata.config.ConfigTable;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Builds a partition's {@link LogConfig} and {@code min.insync.replicas} from topic-level config names
 * ({@code segment.bytes}, {@code retention.ms}, {@code cleanup.policy}, ...): the broker's defaults for topics,
 * overlaid with the topic's own overrides from the metadata image. Values were validated by the controller when
 * they were set; one that does not parse keeps the default (and is logged by the caller's config view).
 *
 * <p>Also the broker keys that set topic defaults live when changed for a broker or cluster-wide (Kafka's
 * {@code DynamicLogConfig}: the first broker synonym of each topic key, {@code log.retention.ms},
 * {@code log.segment.bytes}, {@code message.max.bytes}, ...), limited to the rows of {@link ConfigTable} that
 * are dynamic and acted on for both the broker key and its topic key. {@code unclean.leader.election.enable} and
 * {@code min.insync.replicas} are among them, though the controller is the one that acts on them: it reads the
 * topic's value, else its own node's and the cluster default's dynamic values (it elects unclean leaders for
 * leaderless partitions at its next periodic pass; it clears the ELRs when the minimum changes).
 *
 * <p>{@code producer.id.expiration.ms} is a broker key without a topic key (Kafka's
 * {@code ProducerStateManagerConfig}, shared by every log): it is carried in the same maps under its own name, its
 * static value among the broker's defaults and its dynamic value from {@link #dynamicDefaults}, so that every log's
 * {@link LogConfig#producerIdExpirationMs} follows a live change.
 *
 * <p>Stateless and thread-safe.
 */
public final class LogConfigs {

    /** The broker key of producer state expiry, for every log of the broker. */
    public static final String PRODUCER_ID_EXPIRATION_MS = "producer.id.expiration.ms";

    /** Live broker key to the topic key whose default it sets. */
    private static final Map<String, String> LIVE_DEFAULTS = liveDefaults(ConfigTable.get());

    private LogConfigs() {
    }

    private static Map<String, String> liveDefaults(ConfigTable table) {
        Map<String, String> live = new LinkedHashMap<>();
        for (ConfigKey topic : table.topicKeys()) {
            if (topic.synonyms().isEmpty() || topic.support() != ConfigKey.Support.ACTED) {
                continue;
            }
            String brokerKey = topic.synonyms().get(0).brokerKey();
            boolean brokerLive = table.broker(brokerKey)
                    .filter(k -> k.dynamic() && k.support() == ConfigKey.Support.ACTED).isPresent();
            if (brokerLive) {
                live.put(brokerKey, topic.name());
            }
        }
        live.put(PRODUCER_ID_EXPIRATION_MS, PRODUCER_ID_EXPIRATION_MS);
        return Map.copyOf(live);
    }

    /**
     * Whether broker key {@code brokerKey} sets a topic default (or {@code producer.id.expiration.ms}) live when set
     * per broker or cluster-wide.
     */
    public static boolean isLiveDefault(String brokerKey) {
        return LIVE_DEFAULTS.containsKey(brokerKey);
    }

    /**
     * The topic defaults set by dynamic broker configs: topic key to value, this broker's ({@code node}) before the
     * cluster default's ({@code cluster}); keys that are not live defaults are ignored.
     */
    public static Map<String, String> dynamicDefaults(Map<String, String> node, Map<String, String> cluster) {
        Map<String, String> defaults = new HashMap<>();
        LIVE_DEFAULTS.forEach((brokerKey, topicKey) -> {
            String value = node.getOrDefault(brokerKey, cluster.get(brokerKey));
            if (value != null) {
                defaults.put(topicKey, value);
            }
        });
        return defaults;
    }

    /** The effective topic configs: {@code defaults} with {@code overrides} on top. */
    public static Map<String, String> merge(Map<String, String> defaults, Map<String, String> overrides) {
        Map<String, String> merged = new HashMap<>(defaults);
        merged.putAll(overrides);
        return merged;
    }

    /** The log config for effective topic configs {@code configs}. */
    public static LogConfig toLogConfig(Map<String, String> configs) {
        LogConfig.Builder b = LogConfig.builder();
        intValue(configs, "segment.bytes", b::segmentBytes);
        longValue(configs, "segment.ms", b::segmentMs);
        longValue(configs, "segment.jitter.ms", b::segmentJitterMs);
        intValue(configs, "segment.index.bytes", b::segmentIndexBytes);
        intValue(configs, "index.interval.bytes", b::indexIntervalBytes);
        intValue(configs, "max.message.bytes", b::maxMessageBytes);
        longValue(configs, "flush.messages", b::flushMessages);
        longValue(configs, "flush.ms", b::flushMs);
        longValue(configs, "retention.ms", b::retentionMs);
        longValue(configs, "retention.bytes", b::retentionBytes);
        longValue(configs, "delete.retention.ms", b::deleteRetentionMs);
        longValue(configs, "min.compaction.lag.ms", b::minCompactionLagMs);
        longValue(configs, "max.compaction.lag.ms", b::maxCompactionLagMs);
        longValue(configs, PRODUCER_ID_EXPIRATION_MS, b::producerIdExpirationMs);
        longValue(configs, "message.timestamp.after.max.ms", b::timestampAfterMaxMs);
        longValue(configs, "message.timestamp.before.max.ms", b::timestampBeforeMaxMs);
        longValue(configs, "file.delete.delay.ms", b::fileDeleteDelayMs);
        intValue(configs, "compression.gzip.level", b::compressionGzipLevel);
        intValue(configs, "compression.lz4.level", b::compressionLz4Level);
        intValue(configs, "compression.zstd.level", b::compressionZstdLevel);
        String compression = configs.get("compression.type");
        if (compression != null) {
            b.compressionType(compression.trim().toLowerCase(Locale.ROOT));
        }
        String ratio = configs.get("min.cleanable.dirty.ratio");
        if (ratio != null) {
            try {
                b.minCleanableDirtyRatio(Double.parseDouble(ratio.trim()));
            } catch (NumberFormatException e) {
                // keeps the default, see the class comment
            }
        }
        String policy = configs.get("cleanup.policy");
        if (policy != null) {
            b.cleanupPolicy(policy.trim().toLowerCase(Locale.ROOT));
        }
        String preallocate = configs.get("preallocate");
        if (preallocate != null) {
            b.preallocate(Boolean.parseBoolean(preallocate.trim()));
        }
        String timestampType = configs.get("message.timestamp.type");
        if (timestampType != null) {
            b.logAppendTime("LogAppendTime".equalsIgnoreCase(timestampType.trim()));
        }
        return b.build();
    }

    /** {@code min.insync.replicas} of effective topic configs (1 when absent). */
    public static int minInsyncReplicas(Map<String, String> configs) {
        String value = configs.get("min.insync.replicas");
        if (value == null) {
            return 1;
        }
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            return 1;
        }
    }

    private interface IntSetter {
        LogConfig.Builder set(int v);
    }

    private interface LongSetter {
        LogConfig.Builder set(long v);
    }

    private static void intValue(Map<String, String> configs, String key, IntSetter setter) {
        String value = configs.get(key);
        if (value == null) {
            return;
        }
        try {
            setter.set(Integer.parseInt(value.trim()));
        } catch (NumberFormatException e) {
            // keeps the default, see the class comment
        }
    }

    private static void longValue(Map<String, String> configs, String key, LongSetter setter) {
        String value = configs.get(key);
        if (value == null) {
            return;
        }
        try {
            setter.set(Long.parseLong(value.trim()));
        } catch (NumberFormatException e) {
            // keeps the default, see the class comment
        }
    }
}
