package io.cairn.broker.group.share;

import java.util.List;

/**
 * The broker settings of share groups on the group coordinator, Kafka's {@code group.share.*} keys of its
 * {@code GroupCoordinatorConfig} with Kafka 4.1's defaults and checks. Immutable.
 *
 * @param sessionTimeoutMs       group.share.session.timeout.ms (45000): a member that does not heartbeat for this
 *                               long is removed
 * @param minSessionTimeoutMs    group.share.min.session.timeout.ms (45000)
 * @param maxSessionTimeoutMs    group.share.max.session.timeout.ms (60000)
 * @param heartbeatIntervalMs    group.share.heartbeat.interval.ms (5000): the interval members are told
 * @param minHeartbeatIntervalMs group.share.min.heartbeat.interval.ms (5000)
 * @param maxHeartbeatIntervalMs group.share.max.heartbeat.interval.ms (15000)
 * @param maxSize                group.share.max.size (200): a member beyond it gets GROUP_MAX_SIZE_REACHED
 * @param assignors              group.share.assignors ("simple"): the only one Kafka 4.1 allows
 * @param initializeRetryMs      twice offsets.commit.timeout.ms: a share-partition whose state initialization has
 *                               been under way for this long is initialized again by the next heartbeat (Kafka's
 *                               rule)
 * @param enable                 group.share.enable (internal, false): share groups are served whatever
 *                               share.version says
 */
public record ShareGroupConfig(int sessionTimeoutMs, int minSessionTimeoutMs, int maxSessionTimeoutMs,
                               int heartbeatIntervalMs, int minHeartbeatIntervalMs, int maxHeartbeatIntervalMs,
                               int maxSize, List<String> assignors, long initializeRetryMs, boolean enable) {

    /** The keys, as in Kafka's GroupCoordinatorConfig. */
    public static final String SESSION_TIMEOUT_MS = "group.share.session.timeout.ms";
    public static final String MIN_SESSION_TIMEOUT_MS = "group.share.min.session.timeout.ms";
    public static final String MAX_SESSION_TIMEOUT_MS = "group.share.max.session.timeout.ms";
    public static final String HEARTBEAT_INTERVAL_MS = "group.share.heartbeat.interval.ms";
    public static final String MIN_HEARTBEAT_INTERVAL_MS = "group.share.min.heartbeat.interval.ms";
    public static final String MAX_HEARTBEAT_INTERVAL_MS = "group.share.max.heartbeat.interval.ms";
    public static final String MAX_SIZE = "group.share.max.size";
    public static final String ASSIGNORS = "group.share.assignors";

    /**
     * Checks Kafka's rules: every value at least 1, the max size at most 1000, each default within its min and max,
     * the heartbeat interval below the session timeout, exactly the simple assignor.
     *
     * @throws IllegalArgumentException naming the key that breaks a rule
     */
    public ShareGroupConfig {
        atLeastOne(SESSION_TIMEOUT_MS, sessionTimeoutMs);
        atLeastOne(MIN_SESSION_TIMEOUT_MS, minSessionTimeoutMs);
        atLeastOne(MAX_SESSION_TIMEOUT_MS, maxSessionTimeoutMs);
        atLeastOne(HEARTBEAT_INTERVAL_MS, heartbeatIntervalMs);
        atLeastOne(MIN_HEARTBEAT_INTERVAL_MS, minHeartbeatIntervalMs);
        atLeastOne(MAX_HEARTBEAT_INTERVAL_MS, maxHeartbeatIntervalMs);
        atLeastOne(MAX_SIZE, maxSize);
        require(maxSize <= 1000, "Invalid value " + maxSize + " for " + MAX_SIZE + ": must be at most 1000");
        require(maxSessionTimeoutMs >= minSessionTimeoutMs, MAX_SESSION_TIMEOUT_MS + " must be greater than or"
            + " equal to " + MIN_SESSION_TIMEOUT_MS);
        require(sessionTimeoutMs >= minSessionTimeoutMs, SESSION_TIMEOUT_MS + " must be greater than or equal to "
            + MIN_SESSION_TIMEOUT_MS);
        require(sessionTimeoutMs <= maxSessionTimeoutMs, SESSION_TIMEOUT_MS + " must be less than or equal to "
            + MAX_SESSION_TIMEOUT_MS);
        require(maxHeartbeatIntervalMs >= minHeartbeatIntervalMs, MAX_HEARTBEAT_INTERVAL_MS + " must be greater than"
            + " or equal to " + MIN_HEARTBEAT_INTERVAL_MS);
        require(heartbeatIntervalMs >= minHeartbeatIntervalMs, HEARTBEAT_INTERVAL_MS + " must be greater than or"
            + " equal to " + MIN_HEARTBEAT_INTERVAL_MS);
        require(heartbeatIntervalMs <= maxHeartbeatIntervalMs, HEARTBEAT_INTERVAL_MS + " must be less than or equal"
            + " to " + MAX_HEARTBEAT_INTERVAL_MS);
        require(heartbeatIntervalMs < sessionTimeoutMs, HEARTBEAT_INTERVAL_MS + " must be less than "
            + SESSION_TIMEOUT_MS);
        assignors = List.copyOf(assignors);
        require(assignors.equals(List.of(SimpleAssignor.NAME)), ASSIGNORS + " must contain exactly one assignor,"
            + " simple");
        require(initializeRetryMs >= 0, "initializeRetryMs must not be negative");
    }

    /** Kafka 4.1's defaults (offsets.commit.timeout.ms 5000). */
    public static ShareGroupConfig defaults() {
        return new ShareGroupConfig(45_000, 45_000, 60_000, 5_000, 5_000, 15_000, 200, List.of(SimpleAssignor.NAME),
            10_000L, false);
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
