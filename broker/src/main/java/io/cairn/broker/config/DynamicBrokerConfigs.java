package io.cairn.broker.config;

import io.cairn.isr.ReplicationQuota;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The broker configs that may change at run time (KIP-226 dynamic configs, per broker or cluster-wide), as one
 * table: the keys Cairn applies live, and the rest of the keys Kafka's {@code DynamicBrokerConfig} lets change,
 * which Cairn refuses rather than store without honouring them. Validates a broker resource's resulting dynamic
 * configs as Kafka's {@code DynamicBrokerConfig.validateConfigs} does: a key that is not dynamic gets
 * INVALID_REQUEST with Kafka's "Cannot update these configs dynamically: Set(...)", a bad value INVALID_REQUEST with
 * Kafka's {@code ConfigException} text. Stateless, thread-safe.
 */
public final class DynamicBrokerConfigs {

    /** KIP-73: the bytes per second a leader sends to throttled followers (Long.MAX_VALUE when unset). */
    public static final String LEADER_REPLICATION_THROTTLED_RATE = ReplicationQuota.LEADER_RATE;
    /** KIP-73: the bytes per second a follower fetches for throttled partitions (Long.MAX_VALUE when unset). */
    public static final String FOLLOWER_REPLICATION_THROTTLED_RATE = ReplicationQuota.FOLLOWER_RATE;

    /** The keys Cairn applies without a restart; each is a LONG of at least 0. */
    private static final Set<String> LIVE = Set.of(LEADER_REPLICATION_THROTTLED_RATE,
            FOLLOWER_REPLICATION_THROTTLED_RATE);

    /** Dynamic in Kafka 4.1 but applied only at start by Cairn. */
    private static final Set<String> KAFKA_DYNAMIC = Set.of(
            // log cleaner
            "log.cleaner.threads", "log.cleaner.io.max.bytes.per.second", "log.cleaner.dedupe.buffer.size",
            "log.cleaner.io.buffer.size", "log.cleaner.io.buffer.load.factor", "log.cleaner.backoff.ms",
            // the broker defaults of topic configs
            "log.segment.bytes", "log.roll.ms", "log.roll.hours", "log.roll.jitter.ms", "log.roll.jitter.hours",
            "log.index.size.max.bytes", "log.flush.interval.messages", "log.flush.interval.ms",
            "log.retention.bytes", "log.retention.ms", "log.retention.minutes", "log.retention.hours",
            "message.max.bytes", "log.index.interval.bytes", "log.cleaner.delete.retention.ms",
            "log.cleaner.min.compaction.lag.ms", "log.cleaner.max.compaction.lag.ms", "log.segment.delete.delay.ms",
            "log.cleaner.min.cleanable.ratio", "log.cleanup.policy", "unclean.leader.election.enable",
            "min.insync.replicas", "compression.type", "compression.gzip.level", "compression.lz4.level",
            "compression.zstd.level", "log.preallocate", "log.message.timestamp.type",
            "log.message.timestamp.before.max.ms", "log.message.timestamp.after.max.ms",
            "log.local.retention.ms", "log.local.retention.bytes",
            // thread pools
            "num.io.threads", "num.replica.fetchers", "num.recovery.threads.per.data.dir", "background.threads",
            "num.network.threads",
            // listeners and connections
            "listeners", "advertised.listeners", "listener.security.protocol.map", "max.connections",
            "max.connections.per.ip", "max.connections.per.ip.overrides", "max.connection.creation.rate",
            "metric.reporters", "producer.id.expiration.ms", "transaction.partition.verification.enable",
            "replica.alter.log.dirs.io.max.bytes.per.second");

    /** Prefixes of Kafka's dynamic security, per-listener and remote-log keys. */
    private static final List<String> KAFKA_DYNAMIC_PREFIXES = List.of("ssl.", "sasl.", "listener.name.",
            "remote.log.");

    /** A refused change: {@code invalidRequest} selects INVALID_REQUEST, else INVALID_CONFIG. */
    public record Refusal(boolean invalidRequest, String message) {
    }

    private DynamicBrokerConfigs() {
    }

    /** Whether {@code key} is applied live when set for this broker or cluster-wide. */
    public static boolean isLive(String key) {
        return LIVE.contains(key);
    }

    /**
     * Kafka's checks of a broker resource's dynamic configs after the change ({@code props}: key to value, deleted
     * keys absent), or empty when they are accepted.
     */
    public static Optional<Refusal> validate(Map<String, String> props) {
        Set<String> notDynamic = new TreeSet<>();
        Set<String> notLive = new TreeSet<>();
        for (String key : props.keySet()) {
            if (LIVE.contains(key)) {
                continue;
            }
            if (KAFKA_DYNAMIC.contains(key) || KAFKA_DYNAMIC_PREFIXES.stream().anyMatch(key::startsWith)) {
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
            Optional<String> invalid = invalidRate(e.getKey(), e.getValue());
            if (invalid.isPresent()) {
                return Optional.of(new Refusal(true, invalid.get()));
            }
        }
        return Optional.empty();
    }

    private static Optional<String> invalidRate(String key, String value) {
        long rate;
        try {
            rate = Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            return Optional.of("Invalid value " + value + " for configuration " + key
                    + ": Not a number of type LONG");
        }
        return rate < 0 ? Optional.of("Invalid value " + value + " for configuration " + key
                + ": Value must be at least 0") : Optional.empty();
    }

    private static String scalaSet(Set<String> keys) {
        return "Set(" + String.join(", ", keys) + ")";
    }
}
