package io.cairn.broker.config;

import io.cairn.isr.LogConfigs;
import io.cairn.isr.ReplicationQuota;
import io.cairn.metadata.config.ConfigKey;
import io.cairn.metadata.config.ConfigTable;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The broker configs that may change at run time (KIP-226 dynamic configs, per broker or cluster-wide): the keys
 * Cairn applies live (the replication throttle rates, the thread pools of {@link DynamicThreadPools}, the connection
 * limits of {@link DynamicConnectionLimits}, the cleaner threads and buffers of {@link DynamicLogCleaner} and the
 * topic defaults of {@link LogConfigs#isLiveDefault},
 * {@code log.retention.ms}, {@code log.segment.bytes}, {@code message.max.bytes}, ...), and the rest of the keys
 * Kafka's {@code DynamicBrokerConfig} lets change (the dynamic rows of {@link ConfigTable}), which Cairn refuses
 * rather than store without honouring them. Validates a broker resource's resulting dynamic configs as Kafka's
 * {@code DynamicBrokerConfig.validateConfigs} does: a key that is not dynamic gets INVALID_REQUEST with Kafka's
 * "Cannot update these configs dynamically: Set(...)", a bad value INVALID_REQUEST with Kafka's
 * {@code ConfigException} text (the table's type and rule). Stateless, thread-safe.
 */
public final class DynamicBrokerConfigs {

    /** KIP-73: the bytes per second a leader sends to throttled followers (Long.MAX_VALUE when unset). */
    public static final String LEADER_REPLICATION_THROTTLED_RATE = ReplicationQuota.LEADER_RATE;
    /** KIP-73: the bytes per second a follower fetches for throttled partitions (Long.MAX_VALUE when unset). */
    public static final String FOLLOWER_REPLICATION_THROTTLED_RATE = ReplicationQuota.FOLLOWER_RATE;
    /** The bytes per second replica moves between log directories copy (Long.MAX_VALUE when unset). */
    public static final String ALTER_LOG_DIRS_RATE = ReplicationQuota.ALTER_LOG_DIRS_RATE;

    /** The keys besides the topic defaults that Cairn applies without a restart; the table gives their rule. */
    private static final Set<String> LIVE = Set.of(LEADER_REPLICATION_THROTTLED_RATE,
            FOLLOWER_REPLICATION_THROTTLED_RATE, ALTER_LOG_DIRS_RATE, DynamicThreadPools.NUM_IO_THREADS,
            DynamicThreadPools.NUM_REPLICA_FETCHERS, CleanerSettings.THREADS, CleanerSettings.BACKOFF_MS,
            CleanerSettings.IO_MAX_BYTES_PER_SECOND, CleanerSettings.DEDUPE_BUFFER_SIZE, CleanerSettings.LOAD_FACTOR,
            CleanerSettings.IO_BUFFER_SIZE);

    /** Prefixes of Kafka's dynamic per-listener keys ({@code listener.name.<listener>.ssl.keystore.location}). */
    private static final List<String> KAFKA_DYNAMIC_PREFIXES = List.of("listener.name.");

    /** A refused change: {@code invalidRequest} selects INVALID_REQUEST, else INVALID_CONFIG. */
    public record Refusal(boolean invalidRequest, String message) {
    }

    private DynamicBrokerConfigs() {
    }

    /** Whether {@code key} is applied live when set for this broker or cluster-wide. */
    public static boolean isLive(String key) {
        return LIVE.contains(key) || LogConfigs.isLiveDefault(key) || ConnectionLimits.isKey(key);
    }

    /**
     * Kafka's checks of a broker resource's dynamic configs after the change ({@code props}: key to value, deleted
     * keys absent), or empty when they are accepted.
     */
    public static Optional<Refusal> validate(Map<String, String> props) {
        Set<String> notDynamic = new TreeSet<>();
        Set<String> notLive = new TreeSet<>();
        for (String key : props.keySet()) {
            if (isLive(key)) {
                continue;
            }
            if (ConfigTable.get().broker(key).filter(ConfigKey::dynamic).isPresent()
                    || KAFKA_DYNAMIC_PREFIXES.stream().anyMatch(key::startsWith)) {
                notLive.add(key);
            } else {
                notDynamic.add(key);
            }
        }
        if (!notDynamic.isEmpty()) {
            return Optional.of(new Refusal(true, "Cannot update these configs dynamically: "
                    + scalaSet(notDynamic)));
        }
        if (!notLive.isEmpty()) {
            return Optional.of(new Refusal(false, "Cairn applies these configs only at start, set them in "
                    + "server.properties: " + scalaSet(notLive)));
        }
        for (Map.Entry<String, String> e : new TreeMap<>(props).entrySet()) {
            String tableKey = ConnectionLimits.isListenerKey(e.getKey())
                    ? ConnectionLimits.listenerBaseKey(e.getKey()) : e.getKey();
            Optional<String> invalid = ConfigTable.get().broker(tableKey).orElseThrow().validate(e.getValue());
            if (invalid.isPresent()) {
                return Optional.of(new Refusal(true, invalid.get()));
            }
        }
        return Optional.empty();
    }

    /**
     * The message Kafka's clients see when a component refuses a dynamic change in its {@code
     * validateReconfiguration} (a thread pool, a listener's connection limit): {@code DynamicBrokerConfig} wraps the
     * refusal in {@code new ConfigException("Invalid dynamic configuration", e)}, whose two-argument form is
     * (name, value), so the text is "Invalid value <the refusal> for configuration Invalid dynamic configuration".
     */
    public static String invalidDynamicConfiguration(String refusal) {
        return "Invalid value org.apache.kafka.common.config.ConfigException: " + refusal
                + " for configuration Invalid dynamic configuration";
    }

    private static String scalaSet(Set<String> keys) {
        return "Set(" + String.join(", ", keys) + ")";
    }
}
