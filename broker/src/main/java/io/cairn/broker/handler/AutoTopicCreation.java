package io.cairn.broker.handler;

import io.cairn.broker.share.ShareCoordinator;
import io.cairn.broker.share.ShareCoordinatorConfig;
import io.cairn.wire.message.CreateTopicsRequestData.CreatableTopic;
import io.cairn.wire.message.CreateTopicsRequestData.CreatableTopicConfig;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What Metadata may auto-create (Kafka's {@code AutoTopicCreationManager}): whether {@code auto.create.topics.enable}
 * is on, and how the internal topics are created (their partitions, replication factor and configs, as Kafka's group
 * and transaction coordinators define them); any other topic gets the controller's defaults ({@code num.partitions},
 * {@code default.replication.factor}). Immutable, thread-safe.
 *
 * @param enabled                auto.create.topics.enable
 * @param offsetsPartitions      offsets.topic.num.partitions
 * @param offsetsReplication     offsets.topic.replication.factor
 * @param transactionPartitions  transaction.state.log.num.partitions
 * @param transactionReplication transaction.state.log.replication.factor
 * @param transactionMinIsr      transaction.state.log.min.isr (the topic's min.insync.replicas)
 * @param transactionSegmentBytes transaction.state.log.segment.bytes (the topic's segment.bytes)
 * @param share                  the share.coordinator.state.topic.* settings of {@code __share_group_state}
 */
public record AutoTopicCreation(boolean enabled, int offsetsPartitions, short offsetsReplication,
                                int transactionPartitions, short transactionReplication, int transactionMinIsr,
                                int transactionSegmentBytes, ShareCoordinatorConfig share) {

    /** With Kafka's defaults for {@code __share_group_state}. */
    public AutoTopicCreation(boolean enabled, int offsetsPartitions, short offsetsReplication,
                             int transactionPartitions, short transactionReplication, int transactionMinIsr,
                             int transactionSegmentBytes) {
        this(enabled, offsetsPartitions, offsetsReplication, transactionPartitions, transactionReplication,
                transactionMinIsr, transactionSegmentBytes, ShareCoordinatorConfig.defaults());
    }

    /** With Kafka's default min.isr (2) and segment.bytes (100 MiB) for {@code __transaction_state}. */
    public AutoTopicCreation(boolean enabled, int offsetsPartitions, short offsetsReplication,
                             int transactionPartitions, short transactionReplication) {
        this(enabled, offsetsPartitions, offsetsReplication, transactionPartitions, transactionReplication, 2,
                104_857_600);
    }

    /** Kafka's defaults. */
    public static AutoTopicCreation defaults() {
        return new AutoTopicCreation(true, 50, (short) 3, 50, (short) 3);
    }

    /** The CreateTopics entry for an auto-created topic. */
    public CreatableTopic creatableTopic(String name) {
        Map<String, String> configs = new LinkedHashMap<>();
        CreatableTopic topic = new CreatableTopic().setName(name).setNumPartitions(-1).setReplicationFactor((short) -1);
        if (ClusterView.GROUP_METADATA_TOPIC.equals(name)) {
            topic.setNumPartitions(offsetsPartitions).setReplicationFactor(offsetsReplication);
            configs.put("cleanup.policy", "compact");
            configs.put("compression.type", "producer");
            configs.put("segment.bytes", "104857600");
        } else if (ClusterView.TRANSACTION_STATE_TOPIC.equals(name)) {
            topic.setNumPartitions(transactionPartitions).setReplicationFactor(transactionReplication);
            configs.put("cleanup.policy", "compact");
            configs.put("compression.type", "uncompressed");
            configs.put("min.insync.replicas", Integer.toString(transactionMinIsr));
            configs.put("segment.bytes", Integer.toString(transactionSegmentBytes));
            configs.put("unclean.leader.election.enable", "false");
        } else if (ShareCoordinator.TOPIC.equals(name)) {
            // Kafka's ShareCoordinatorService.shareGroupStateTopicConfigs: never compacted, kept forever.
            topic.setNumPartitions(share.numPartitions()).setReplicationFactor(share.replicationFactor());
            configs.put("cleanup.policy", "delete");
            configs.put("compression.type", "producer");
            configs.put("segment.bytes", Integer.toString(share.segmentBytes()));
            configs.put("min.insync.replicas", Integer.toString(share.minIsr()));
            configs.put("retention.ms", "-1");
        }
        configs.forEach((key, value) -> topic.configs().add(new CreatableTopicConfig().setName(key).setValue(value)));
        return topic;
    }
}
