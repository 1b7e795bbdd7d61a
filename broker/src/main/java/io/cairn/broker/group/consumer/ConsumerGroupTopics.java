package io.cairn.broker.group.consumer;

import io.cairn.broker.group.assignor.TopicPartitionCounts;
import io.cairn.wire.protocol.Uuid;

/** The topics a consumer group's subscriptions resolve against: the broker's metadata image. */
public interface ConsumerGroupTopics extends TopicPartitionCounts {

    /** The id of the topic named {@code name}, or null when it does not exist. */
    Uuid topicId(String name);

    /** The name of the topic of {@code topicId}, or null when it does not exist. */
    String topicName(Uuid topicId);
}
