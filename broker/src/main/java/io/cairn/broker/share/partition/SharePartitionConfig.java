package io.cairn.broker.share.partition;

/**
 * The broker settings of share-partitions (Kafka's {@code ShareGroupConfig}). Immutable.
 *
 * @param lockDurationMs      {@code group.share.record.lock.duration.ms}: how long an acquired record stays locked
 * @param deliveryCountLimit  {@code group.share.delivery.count.limit}: deliveries after which a released record is
 *                            archived
 * @param maxRecordLocks      {@code group.share.partition.max.record.locks}: the most in-flight records of one
 *                            share-partition
 * @param maxShareSessions    {@code group.share.max.share.sessions}: the most share sessions of this broker
 */
public record SharePartitionConfig(int lockDurationMs, int deliveryCountLimit, int maxRecordLocks,
                                   int maxShareSessions) {

    /** Kafka 4.1.1's defaults. */
    public static final SharePartitionConfig DEFAULTS = new SharePartitionConfig(30_000, 5, 2_000, 2_000);

    public SharePartitionConfig {
        if (lockDurationMs <= 0 || deliveryCountLimit <= 0 || maxRecordLocks <= 0 || maxShareSessions <= 0) {
            throw new IllegalArgumentException("share-partition settings must be positive");
        }
    }
}
