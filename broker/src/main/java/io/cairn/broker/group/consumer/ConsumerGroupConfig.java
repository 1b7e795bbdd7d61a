package io.cairn.broker.group.consumer;

import java.util.List;

/**
 * The broker settings of KIP-848 consumer groups, Kafka's {@code group.consumer.*} keys with Kafka 4.1's defaults
 * and checks. Immutable.
 *
 * @param sessionTimeoutMs       group.consumer.session.timeout.ms (45000): a member that does not heartbeat for
 *                               this long is removed
 * @param minSessionTimeoutMs    group.consumer.min.session.timeout.ms (45000)
 * @param maxSessionTimeoutMs    group.consumer.max.session.timeout.ms (60000)
 * @param heartbeatIntervalMs    group.consumer.heartbeat.interval.ms (5000): the interval members are told
 * @param minHeartbeatIntervalMs group.consumer.min.heartbeat.interval.ms (5000)
 * @param maxHeartbeatIntervalMs group.consumer.max.heartbeat.interval.ms (15000)
 * @param maxSize                group.consumer.max.size (Integer.MAX_VALUE): a member beyond it gets
 *                               GROUP_MAX_SIZE_REACHED
 * @param assignors              group.consumer.assignors ("uniform,range"): the server-side assignors, the first
 *                               one the default
 * @param migrationPolicy        group.consumer.migration.policy (bidirectional): the online conversions between
 *                               classic and consumer groups with members that are allowed
 * @param classicMaxSize         group.max.size (Integer.MAX_VALUE): a consumer group larger than it is not
 *                               downgraded to a classic group
 */
public record ConsumerGroupConfig(int sessionTimeoutMs, int minSessionTimeoutMs, int maxSessionTimeoutMs,
                                  int heartbeatIntervalMs, int minHeartbeatIntervalMs, int maxHeartbeatIntervalMs,
                                  int maxSize, List<String> assignors, ConsumerGroupMigrationPolicy migrationPolicy,
                                  int classicMaxSize) {

    /** The keys, as in Kafka's GroupCoordinatorConfig. */
    public static final String SESSION_TIMEOUT_MS = "group.consumer.session.timeout.ms";
    public static final String MIN_SESSION_TIMEOUT_MS = "group.consumer.min.session.timeout.ms";
    public static final String MAX_SESSION_TIMEOUT_MS = "group.consumer.max.session.timeout.ms";
    public static final String HEARTBEAT_INTERVAL_MS = "group.consumer.heartbeat.interval.ms";
    public static final String MIN_HEARTBEAT_INTERVAL_MS = "group.consumer.min.heartbeat.interval.ms";
    public static final String MAX_HEARTBEAT_INTERVAL_MS = "group.consumer.max.heartbeat.interval.ms";
    public static final String MAX_SIZE = "group.consumer.max.size";
    public static final String ASSIGNORS = "group.consumer.assignors";

    /** The settings with Kafka's default migration policy (bidirectional) and no classic group size limit. */
    public ConsumerGroupConfig(int sessionTimeoutMs, int minSessionTimeoutMs, int maxSessionTimeoutMs,
                               int heartbeatIntervalMs, int minHeartbeatIntervalMs, int maxHeartbeatIntervalMs,
                               int maxSize, List<String> assignors) {
        this(sessionTimeoutMs, minSessionTimeoutMs, maxSessionTimeoutMs, heartbeatIntervalMs, minHeartbeatIntervalMs,
            maxHeartbeatIntervalMs, maxSize, assignors, ConsumerGroupMigrationPolicy.BIDIRECTIONAL, Integer.MAX_VALUE);
    }

    /** These settings with another migration policy. */
    public ConsumerGroupConfig withMigrationPolicy(ConsumerGroupMigrationPolicy policy) {
        return new ConsumerGroupConfig(sessionTimeoutMs, minSessionTimeoutMs, maxSessionTimeoutMs, heartbeatIntervalMs,
            minHeartbeatIntervalMs, maxHeartbeatIntervalMs, maxSize, assignors, policy, classicMaxSize);
    }

    /**
     * Checks Kafka's rules: every value at least 1, each default within its min and max, the heartbeat interval
     * below the session timeout, at least one assignor.
     *
     * @throws IllegalArgumentException naming the key that breaks a rule
     */
    public ConsumerGroupConfig {
        atLeastOne(SESSION_TIMEOUT_MS, sessionTimeoutMs);
        atLeastOne(MIN_SESSION_TIMEOUT_MS, minSessionTimeoutMs);
        atLeastOne(MAX_SESSION_TIMEOUT_MS, maxSessionTimeoutMs);
        atLeastOne(HEARTBEAT_INTERVAL_MS, heartbeatIntervalMs);
        atLeastOne(MIN_HEARTBEAT_INTERVAL_MS, minHeartbeatIntervalMs);
        atLeastOne(MAX_HEARTBEAT_INTERVAL_MS, maxHeartbeatIntervalMs);
        atLeastOne(MAX_SIZE, maxSize);
        require(maxSessionTimeoutMs >= minSessionTimeoutMs, MAX_SESSION_TIMEOUT_MS + " must be greater than or"
            + " equal to " + MIN_SESSION_TIMEOUT_MS);
        require(sessionTimeoutMs >= minSessionTimeoutMs && sessionTimeoutMs <= maxSessionTimeoutMs,
            SESSION_TIMEOUT_MS + " must be between " + MIN_SESSION_TIMEOUT_MS + " and " + MAX_SESSION_TIMEOUT_MS);
        require(maxHeartbeatIntervalMs >= minHeartbeatIntervalMs, MAX_HEARTBEAT_INTERVAL_MS + " must be greater than"
            + " or equal to " + MIN_HEARTBEAT_INTERVAL_MS);
        require(heartbeatIntervalMs >= minHeartbeatIntervalMs && heartbeatIntervalMs <= maxHeartbeatIntervalMs,
            HEARTBEAT_INTERVAL_MS + " must be between " + MIN_HEARTBEAT_INTERVAL_MS + " and "
                + MAX_HEARTBEAT_INTERVAL_MS);
        require(heartbeatIntervalMs < sessionTimeoutMs, HEARTBEAT_INTERVAL_MS + " must be less than "
            + SESSION_TIMEOUT_MS);
        assignors = List.copyOf(assignors);
        require(!assignors.isEmpty(), ASSIGNORS + " must name at least one assignor");
        require(migrationPolicy != null, ConsumerGroupMigrationPolicy.KEY + " must be set");
    }

    /** Kafka 4.1's defaults. */
    public static ConsumerGroupConfig defaults() {
        return new ConsumerGroupConfig(45_000, 45_000, 60_000, 5_000, 5_000, 15_000, Integer.MAX_VALUE,
            List.of("uniform", "range"));
    }

    /** The assignor a group uses when no member names one. */
    public String defaultAssignor() {
        return assignors.get(0);
    }

    private static void atLeastOne(String key, int value) {
        require(value >= 1, "Invalid value " + value + " for " + key + ": must be at least 1");
    }

    private static void require(boolean condition, String message) {
        if (!condition) {
            throw new IllegalArgumentException(message);
        }
    }
}
