package io.cairn.broker.group.assignor;

import io.cairn.wire.protocol.Uuid;

/** The partition counts of the topics an assignor may see (Kafka's {@code SubscribedTopicDescriber}). */
@FunctionalInterface
public interface TopicPartitionCounts {

    /** The number of partitions of the topic, or -1 when it does not exist. */
    int numPartitions(Uuid topicId);
}
