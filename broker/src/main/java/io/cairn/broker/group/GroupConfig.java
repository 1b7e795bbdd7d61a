package io.cairn.broker.group;

/**
 * The broker settings of the group coordinator (Kafka's {@code group.*} and {@code offsets.*} keys). Immutable.
 *
 * @param minSessionTimeoutMs          group.min.session.timeout.ms: a JoinGroup below it gets INVALID_SESSION_TIMEOUT
 * @param maxSessionTimeoutMs          group.max.session.timeout.ms: a JoinGroup above it gets INVALID_SESSION_TIMEOUT
 * @param initialRebalanceDelayMs      group.initial.rebalance.delay.ms: how long the first rebalance of an empty
 *                                     group waits for more members
 * @param maxGroupSize                 group.max.size: a JoinGroup beyond it gets GROUP_MAX_SIZE_REACHED
 * @param offsetsRetentionMs           offsets.retention.minutes in ms: how long the offsets of an empty group live
 * @param offsetsRetentionCheckIntervalMs offsets.retention.check.interval.ms
 * @param offsetMetadataMaxBytes       offset.metadata.max.bytes: longer commit metadata gets OFFSET_METADATA_TOO_LARGE
 */
public record GroupConfig(int minSessionTimeoutMs, int maxSessionTimeoutMs, int initialRebalanceDelayMs,
                          int maxGroupSize, long offsetsRetentionMs, long offsetsRetentionCheckIntervalMs,
                          int offsetMetadataMaxBytes) {

    /** Kafka's defaults. */
    public static GroupConfig defaults() {
        return new GroupConfig(6_000, 1_800_000, 3_000, Integer.MAX_VALUE, 7L * 24 * 60 * 60 * 1000, 600_000L, 4096);
    }
}
