package io.cairn.broker.group.consumer;

import io.cairn.broker.group.assignor.TopicPartitionCounts;
import io.cairn.wire.protocol.Uuid;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/** The topics a consumer group's subscriptions resolve against: the broker's metadata image. */
public interface ConsumerGroupTopics extends TopicPartitionCounts {

    /** The id of the topic named {@code name}, or null when it does not exist. */
    Uuid topicId(String name);

    /** The name of the topic of {@code topicId}, or null when it does not exist. */
    String topicName(Uuid topicId);

    /** The names of every topic (regular expressions are matched against them). */
    default Collection<String> topicNames() {
        return List.of();
    }

    /** The dynamic configs of group {@code groupId} (its GROUP config resource), empty when none. */
    default Map<String, String> groupConfigs(String groupId) {
        return Map.of();
    }

    /** The metadata offset of this image (-1 when unknown). */
    default long version() {
        return -1L;
    }

    /**
     * The metadata offset of the latest image that created a topic (-1 when unknown): regular expressions resolved
     * before it may match more now.
     */
    default long lastTopicCreationVersion() {
        return -1L;
    }
}
