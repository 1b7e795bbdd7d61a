package io.cairn.broker.share;

import io.cairn.broker.coordinator.CoordinatorRuntimeSettings;

/**
 * The broker settings of the share coordinator (Kafka's {@code ShareCoordinatorConfig}, {@code share.coordinator.*}).
 * Immutable.
 *
 * @param numPartitions      share.coordinator.state.topic.num.partitions: the partition count of
 *                           {@code __share_group_state} until it exists
 * @param replicationFactor  share.coordinator.state.topic.replication.factor
 * @param minIsr             share.coordinator.state.topic.min.isr (the topic's min.insync.replicas)
 * @param segmentBytes       share.coordinator.state.topic.segment.bytes (the topic's segment.bytes)
 * @param updatesPerSnapshot share.coordinator.snapshot.update.records.per.snapshot: updates of a share-partition
 *                           between two snapshots
 * @param loadBufferSize     share.coordinator.load.buffer.size: bytes read at a time while loading
 * @param runtime            share.coordinator.threads, share.coordinator.append.linger.ms and
 *                           share.coordinator.write.timeout.ms
 */
public record ShareCoordinatorConfig(int numPartitions, short replicationFactor, int minIsr, int segmentBytes,
                                     int updatesPerSnapshot, int loadBufferSize, CoordinatorRuntimeSettings runtime) {

    /** Kafka 4.1's defaults. */
    public static ShareCoordinatorConfig defaults() {
        return new ShareCoordinatorConfig(50, (short) 3, 2, 104_857_600, 500, 5_242_880,
            new CoordinatorRuntimeSettings(1, 5, 5_000L));
    }
}
