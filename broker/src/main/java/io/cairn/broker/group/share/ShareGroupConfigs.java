package io.cairn.broker.group.share;

import io.cairn.broker.share.partition.SharePartitionConfig;
import io.cairn.metadata.image.ConfigResource;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The group-level share configs of Kafka 4.1's {@code GroupConfig} (config resource type GROUP, 32; set with
 * IncrementalAlterConfigs, {@code kafka-configs --entity-type groups}), kept as metadata config records: each
 * overrides, for one share group, the broker key it names, which is also its default. Kafka's checks: an unknown name
 * is refused, values must parse, each timeout within the broker's min and max ({@code group.share.min.*},
 * {@code group.share.max.*}), INVALID_CONFIG with Kafka's messages. Immutable, thread-safe.
 *
 * <p>Honoured: share.session.timeout.ms and share.heartbeat.interval.ms by the share group coordinator on each
 * heartbeat ({@code ShareGroupManager}); share.record.lock.duration.ms and share.auto.offset.reset by the
 * share-partition leader when it loads a share-partition (its lock duration, and where it starts when it has no start
 * offset yet); share.isolation.level on each share fetch (read_committed reads to the last stable offset and archives
 * the records of aborted transactions). Kafka's {@code consumer.*} and {@code streams.*} group keys are not accepted
 * yet: refused as unknown names.
 */
public final class ShareGroupConfigs {

    /** Kafka's {@code ConfigResource.Type.GROUP} id. */
    public static final byte GROUP = ConfigResource.GROUP;
    public static final String SESSION_TIMEOUT_MS = "share.session.timeout.ms";
    public static final String HEARTBEAT_INTERVAL_MS = "share.heartbeat.interval.ms";
    public static final String RECORD_LOCK_DURATION_MS = "share.record.lock.duration.ms";
    public static final String AUTO_OFFSET_RESET = "share.auto.offset.reset";
    public static final String ISOLATION_LEVEL = "share.isolation.level";

    private static final String BY_DURATION = "by_duration:";

    /** The settings of one share group: its overrides over the broker's values. */
    public record Settings(int sessionTimeoutMs, int heartbeatIntervalMs, int recordLockDurationMs,
                           String autoOffsetReset, boolean readCommitted) {

        /** The start of a new share-partition: {@code earliest}, {@code latest} or a duration back from now. */
        public Optional<Duration> resetDuration() {
            String reset = autoOffsetReset.toLowerCase(Locale.ROOT);
            return reset.startsWith(BY_DURATION) ? Optional.of(Duration.parse(reset.substring(BY_DURATION.length())
                .toUpperCase(Locale.ROOT))) : Optional.empty();
        }

        public boolean resetToEarliest() {
            return autoOffsetReset.equalsIgnoreCase("earliest");
        }
    }

    private final ShareGroupConfig group;
    private final int lockDurationMs;
    private final int minLockDurationMs;
    private final int maxLockDurationMs;

    /**
     * @param group             the broker's {@code group.share.*} coordinator keys
     * @param partition         the broker's share-partition keys (the lock duration default)
     * @param minLockDurationMs group.share.min.record.lock.duration.ms
     * @param maxLockDurationMs group.share.max.record.lock.duration.ms
     */
    public ShareGroupConfigs(ShareGroupConfig group, SharePartitionConfig partition, int minLockDurationMs,
                             int maxLockDurationMs) {
        this.group = group;
        this.lockDurationMs = partition.lockDurationMs();
        this.minLockDurationMs = minLockDurationMs;
        this.maxLockDurationMs = maxLockDurationMs;
    }

    /** Kafka's defaults and checks on a broker of the default settings. */
    public static ShareGroupConfigs defaults() {
        return new ShareGroupConfigs(ShareGroupConfig.defaults(), SharePartitionConfig.DEFAULTS, 15_000, 60_000);
    }

    /** Each key with the broker value it defaults to, in Kafka's order. */
    public Map<String, String> brokerDefaults() {
        Map<String, String> values = new LinkedHashMap<>();
        values.put(SESSION_TIMEOUT_MS, Integer.toString(group.sessionTimeoutMs()));
        values.put(HEARTBEAT_INTERVAL_MS, Integer.toString(group.heartbeatIntervalMs()));
        values.put(RECORD_LOCK_DURATION_MS, Integer.toString(lockDurationMs));
        values.put(AUTO_OFFSET_RESET, "latest");
        values.put(ISOLATION_LEVEL, "read_uncommitted");
        return values;
    }

    /** The broker key each group key overrides (its DescribeConfigs synonym). */
    public static String brokerKey(String key) {
        return switch (key) {
            case SESSION_TIMEOUT_MS -> ShareGroupConfig.SESSION_TIMEOUT_MS;
            case HEARTBEAT_INTERVAL_MS -> ShareGroupConfig.HEARTBEAT_INTERVAL_MS;
            case RECORD_LOCK_DURATION_MS -> "group.share.record.lock.duration.ms";
            default -> null;
        };
    }

    /**
     * Kafka's {@code GroupConfig.validate} of the configs a group would have: the message of the first rule
     * broken (INVALID_CONFIG), or empty.
     */
    public Optional<String> validate(Map<String, String> props) {
        for (String name : props.keySet()) {
            if (!brokerDefaults().containsKey(name)) {
                return Optional.of("Unknown group config name: " + name);
            }
        }
        for (Map.Entry<String, String> e : props.entrySet()) {
            String key = e.getKey();
            String value = e.getValue();
            if (key.equals(ISOLATION_LEVEL)) {
                if (!value.equals("read_committed") && !value.equals("read_uncommitted")) {
                    return Optional.of("Invalid value " + value + " for configuration " + key
                        + ": String must be one of: read_committed, read_uncommitted");
                }
                continue;
            }
            if (key.equals(AUTO_OFFSET_RESET)) {
                Optional<String> bad = checkReset(value);
                if (bad.isPresent()) {
                    return bad;
                }
                continue;
            }
            int v;
            try {
                v = Integer.parseInt(value.trim());
            } catch (NumberFormatException ex) {
                return Optional.of("Invalid value " + value + " for configuration " + key
                    + ": Not a number of type INT");
            }
            int least = key.equals(RECORD_LOCK_DURATION_MS) ? 1000 : 1;
            if (v < least) {
                return Optional.of("Invalid value " + v + " for configuration " + key + ": Value must be at least "
                    + least);
            }
        }
        Settings s = settings(props);
        if (s.heartbeatIntervalMs() < group.minHeartbeatIntervalMs()) {
            return Optional.of(HEARTBEAT_INTERVAL_MS + " must be greater than or equal to "
                + ShareGroupConfig.MIN_HEARTBEAT_INTERVAL_MS);
        }
        if (s.heartbeatIntervalMs() > group.maxHeartbeatIntervalMs()) {
            return Optional.of(HEARTBEAT_INTERVAL_MS + " must be less than or equal to "
                + ShareGroupConfig.MAX_HEARTBEAT_INTERVAL_MS);
        }
        if (s.sessionTimeoutMs() < group.minSessionTimeoutMs()) {
            return Optional.of(SESSION_TIMEOUT_MS + " must be greater than or equal to "
                + ShareGroupConfig.MIN_SESSION_TIMEOUT_MS);
        }
        if (s.sessionTimeoutMs() > group.maxSessionTimeoutMs()) {
            return Optional.of(SESSION_TIMEOUT_MS + " must be less than or equal to "
                + ShareGroupConfig.MAX_SESSION_TIMEOUT_MS);
        }
        if (s.recordLockDurationMs() < minLockDurationMs) {
            return Optional.of(RECORD_LOCK_DURATION_MS
                + " must be greater than or equal to group.share.min.record.lock.duration.ms");
        }
        if (s.recordLockDurationMs() > maxLockDurationMs) {
            return Optional.of(RECORD_LOCK_DURATION_MS
                + " must be less than or equal to group.share.max.record.lock.duration.ms");
        }
        return Optional.empty();
    }

    private static Optional<String> checkReset(String value) {
        String reset = value.toLowerCase(Locale.ROOT).trim();
        if (reset.equals("earliest") || reset.equals("latest")) {
            return Optional.empty();
        }
        if (reset.startsWith(BY_DURATION)) {
            String duration = reset.substring(BY_DURATION.length()).trim();
            try {
                if (!Duration.parse(duration.toUpperCase(Locale.ROOT)).isNegative()) {
                    return Optional.empty();
                }
                return Optional.of("Invalid value " + value + " for configuration " + AUTO_OFFSET_RESET
                    + ": Negative duration is not supported.");
            } catch (DateTimeParseException e) {
                return Optional.of("Invalid value " + value + " for configuration " + AUTO_OFFSET_RESET
                    + ": Unable to parse duration string in " + BY_DURATION + " format.");
            }
        }
        return Optional.of("Invalid value " + value + " for configuration " + AUTO_OFFSET_RESET
            + ": Invalid value `" + value + "` for configuration " + AUTO_OFFSET_RESET
            + ". The value must be either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS.>'.");
    }

    /** The settings of a group whose overrides are {@code dynamic} (valid ones; a bad value keeps the default). */
    public Settings settings(Map<String, String> dynamic) {
        return new Settings(intValue(dynamic, SESSION_TIMEOUT_MS, group.sessionTimeoutMs()),
            intValue(dynamic, HEARTBEAT_INTERVAL_MS, group.heartbeatIntervalMs()),
            intValue(dynamic, RECORD_LOCK_DURATION_MS, lockDurationMs),
            dynamic.get(AUTO_OFFSET_RESET) != null && checkReset(dynamic.get(AUTO_OFFSET_RESET)).isEmpty()
                ? dynamic.get(AUTO_OFFSET_RESET).trim() : "latest",
            "read_committed".equals(dynamic.get(ISOLATION_LEVEL)));
    }

    private static int intValue(Map<String, String> values, String key, int fallback) {
        String value = values.get(key);
        if (value == null) {
            return fallback;
        }
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            return fallback;
        }
    }
}
