package io.cairn.broker.group.consumer;

import java.util.Locale;

/**
 * Kafka's {@code group.consumer.migration.policy}: which online conversions of a group with members are allowed. An
 * upgrade turns a classic group whose members use the consumer embedded protocol into a consumer group when a
 * member joins with ConsumerGroupHeartbeat; a downgrade turns a consumer group back into a classic group when its
 * last member speaking the consumer protocol leaves and classic members remain. Empty groups are converted either
 * way whatever the policy, as on Kafka.
 */
public enum ConsumerGroupMigrationPolicy {
    /** Neither conversion. */
    DISABLED,
    /** Only consumer to classic. */
    DOWNGRADE,
    /** Only classic to consumer. */
    UPGRADE,
    /** Both: Kafka's default. */
    BIDIRECTIONAL;

    /** The key, as in Kafka's GroupCoordinatorConfig. */
    public static final String KEY = "group.consumer.migration.policy";

    /**
     * The policy of a configured value, case-insensitively as Kafka's validator.
     *
     * @throws IllegalArgumentException for another value, with Kafka's message
     */
    public static ConsumerGroupMigrationPolicy parse(String value) {
        String trimmed = value == null ? "" : value.trim();
        for (ConsumerGroupMigrationPolicy policy : values()) {
            if (policy.name().equalsIgnoreCase(trimmed)) {
                return policy;
            }
        }
        throw new IllegalArgumentException("Invalid value " + value + " for configuration " + KEY
            + ": String must be one of (case insensitive): DISABLED, DOWNGRADE, UPGRADE, BIDIRECTIONAL");
    }

    public boolean isUpgradeEnabled() {
        return this == UPGRADE || this == BIDIRECTIONAL;
    }

    public boolean isDowngradeEnabled() {
        return this == DOWNGRADE || this == BIDIRECTIONAL;
    }

    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
