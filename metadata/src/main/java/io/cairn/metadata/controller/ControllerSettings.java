package io.cairn.metadata.controller;

/**
 * The broker configs the controller's decisions depend on, with Kafka's names and defaults. Immutable,
 * thread-safe.
 *
 * @param nodeId                          this controller's node.id
 * @param brokerSessionTimeoutMs          broker.session.timeout.ms: fence a broker silent for this long (9000)
 * @param defaultReplicationFactor        default.replication.factor for CreateTopics with -1 (1)
 * @param defaultNumPartitions            num.partitions for CreateTopics with -1 (1)
 * @param uncleanLeaderElectionEnable     unclean.leader.election.enable cluster default (false)
 * @param deleteTopicEnable               delete.topic.enable (true)
 * @param producerIdBlockSize             producer ids per AllocateProducerIds block (1000, as Kafka)
 * @param leaderImbalanceCheckIntervalMs  leader.imbalance.check.interval.seconds in ms (300 s) when
 *                                        auto.leader.rebalance.enable (true), else -1: how often the active
 *                                        controller moves leadership back to preferred replicas
 * @param uncleanLeaderElectionIntervalMs unclean.leader.election.interval.ms (300000): how often the active
 *                                        controller elects leaders for leaderless partitions of topics that allow
 *                                        unclean election
 * @param minInsyncReplicas               min.insync.replicas of this node (1): the default of topics without the
 *                                        config and without a cluster default, for eligible leader replicas
 * @param delegationTokens                the delegation.token.* configs
 */
public record ControllerSettings(int nodeId, long brokerSessionTimeoutMs, short defaultReplicationFactor,
                                 int defaultNumPartitions, boolean uncleanLeaderElectionEnable,
                                 boolean deleteTopicEnable, int producerIdBlockSize,
                                 long leaderImbalanceCheckIntervalMs, long uncleanLeaderElectionIntervalMs,
                                 int minInsyncReplicas, DelegationTokenSettings delegationTokens) {

    /** Kafka's leader.imbalance.check.interval.seconds default, in ms. */
    public static final long DEFAULT_LEADER_IMBALANCE_CHECK_INTERVAL_MS = 300_000L;
    /** Kafka's unclean.leader.election.interval.ms default. */
    public static final long DEFAULT_UNCLEAN_LEADER_ELECTION_INTERVAL_MS = 300_000L;

    /** Without delegation tokens. */
    public ControllerSettings(int nodeId, long brokerSessionTimeoutMs, short defaultReplicationFactor,
                              int defaultNumPartitions, boolean uncleanLeaderElectionEnable,
                              boolean deleteTopicEnable, int producerIdBlockSize,
                              long leaderImbalanceCheckIntervalMs, long uncleanLeaderElectionIntervalMs,
                              int minInsyncReplicas) {
        this(nodeId, brokerSessionTimeoutMs, defaultReplicationFactor, defaultNumPartitions,
                uncleanLeaderElectionEnable, deleteTopicEnable, producerIdBlockSize, leaderImbalanceCheckIntervalMs,
                uncleanLeaderElectionIntervalMs, minInsyncReplicas, DelegationTokenSettings.DISABLED);
    }

    /** With Kafka's default leader balancing (enabled, every 300 s) and unclean election check (every 300 s). */
    public ControllerSettings(int nodeId, long brokerSessionTimeoutMs, short defaultReplicationFactor,
                              int defaultNumPartitions, boolean uncleanLeaderElectionEnable,
                              boolean deleteTopicEnable, int producerIdBlockSize) {
        this(nodeId, brokerSessionTimeoutMs, defaultReplicationFactor, defaultNumPartitions,
                uncleanLeaderElectionEnable, deleteTopicEnable, producerIdBlockSize,
                DEFAULT_LEADER_IMBALANCE_CHECK_INTERVAL_MS, DEFAULT_UNCLEAN_LEADER_ELECTION_INTERVAL_MS, 1);
    }

    /** Kafka's defaults for the given node. */
    public static ControllerSettings defaults(int nodeId) {
        return new ControllerSettings(nodeId, 9000L, (short) 1, 1, false, true, 1000);
    }

    public ControllerSettings withBrokerSessionTimeoutMs(long timeoutMs) {
        return new ControllerSettings(nodeId, timeoutMs, defaultReplicationFactor, defaultNumPartitions,
                uncleanLeaderElectionEnable, deleteTopicEnable, producerIdBlockSize, leaderImbalanceCheckIntervalMs,
                uncleanLeaderElectionIntervalMs, minInsyncReplicas, delegationTokens);
    }

    /** With leader balancing every {@code intervalMs}, or never when it is -1. */
    public ControllerSettings withLeaderImbalanceCheckIntervalMs(long intervalMs) {
        return new ControllerSettings(nodeId, brokerSessionTimeoutMs, defaultReplicationFactor, defaultNumPartitions,
                uncleanLeaderElectionEnable, deleteTopicEnable, producerIdBlockSize, intervalMs,
                uncleanLeaderElectionIntervalMs, minInsyncReplicas, delegationTokens);
    }

    /** With the unclean election check every {@code intervalMs}. */
    public ControllerSettings withUncleanLeaderElectionIntervalMs(long intervalMs) {
        return new ControllerSettings(nodeId, brokerSessionTimeoutMs, defaultReplicationFactor, defaultNumPartitions,
                uncleanLeaderElectionEnable, deleteTopicEnable, producerIdBlockSize, leaderImbalanceCheckIntervalMs,
                intervalMs, minInsyncReplicas, delegationTokens);
    }

    /** With these delegation.token.* configs. */
    public ControllerSettings withDelegationTokens(DelegationTokenSettings value) {
        return new ControllerSettings(nodeId, brokerSessionTimeoutMs, defaultReplicationFactor, defaultNumPartitions,
                uncleanLeaderElectionEnable, deleteTopicEnable, producerIdBlockSize, leaderImbalanceCheckIntervalMs,
                uncleanLeaderElectionIntervalMs, minInsyncReplicas, value);
    }

    /** With this node's min.insync.replicas. */
    public ControllerSettings withMinInsyncReplicas(int value) {
        return new ControllerSettings(nodeId, brokerSessionTimeoutMs, defaultReplicationFactor, defaultNumPartitions,
                uncleanLeaderElectionEnable, deleteTopicEnable, producerIdBlockSize, leaderImbalanceCheckIntervalMs,
                uncleanLeaderElectionIntervalMs, value, delegationTokens);
    }
}
