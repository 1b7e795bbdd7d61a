package io.cairn.metadata.controller;

/**
 * The broker configs the controller's decisions depend on, with Kafka's names and defaults. Immutable,
 * thread-safe.
 *
 * @param nodeId                       this controller's node.id
 * @param brokerSessionTimeoutMs       broker.session.timeout.ms: fence a broker silent for this long (9000)
 * @param defaultReplicationFactor     default.replication.factor for CreateTopics with -1 (1)
 * @param defaultNumPartitions         num.partitions for CreateTopics with -1 (1)
 * @param uncleanLeaderElectionEnable  unclean.leader.election.enable cluster default (false)
 * @param deleteTopicEnable            delete.topic.enable (true)
 * @param producerIdBlockSize          producer ids per AllocateProducerIds block (1000, as Kafka)
 */
public record ControllerSettings(int nodeId, long brokerSessionTimeoutMs, short defaultReplicationFactor,
                                 int defaultNumPartitions, boolean uncleanLeaderElectionEnable,
                                 boolean deleteTopicEnable, int producerIdBlockSize) {

    /** Kafka's defaults for the given node. */
    public static ControllerSettings defaults(int nodeId) {
        return new ControllerSettings(nodeId, 9000L, (short) 1, 1, false, true, 1000);
    }

    public ControllerSettings withBrokerSessionTimeoutMs(long timeoutMs) {
        return new ControllerSettings(nodeId, timeoutMs, defaultReplicationFactor, defaultNumPartitions,
                uncleanLeaderElectionEnable, deleteTopicEnable, producerIdBlockSize);
    }
}
