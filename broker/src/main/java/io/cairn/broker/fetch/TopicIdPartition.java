package io.cairn.broker.fetch;

import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.protocol.Uuid;
import java.util.Objects;

/**
 * A partition as a fetch names it: by topic id from v13 on (the name is then looked up and is null while the id is
 * unknown), by name before (the id is {@link Uuid#ZERO}). Equality follows Kafka's {@code CachedPartition}: by id
 * and index when an id is set, otherwise by name and index, so a partition whose name was resolved later is still
 * the same partition. Immutable.
 *
 * @param topicId   the topic id, or {@link Uuid#ZERO} for requests before v13
 * @param topic     the topic name, or null when the id names no known topic
 * @param partition the partition index
 */
public record TopicIdPartition(Uuid topicId, String topic, int partition) {

    public boolean hasTopicId() {
        return !Uuid.ZERO.equals(topicId);
    }

    /** The partition by name; only for a known topic. */
    public TopicPartition topicPartition() {
        return new TopicPartition(topic, partition);
    }

    /** The same partition with its topic name set. */
    public TopicIdPartition withTopic(String name) {
        return new TopicIdPartition(topicId, name, partition);
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof TopicIdPartition)) {
            return false;
        }
        TopicIdPartition that = (TopicIdPartition) o;
        if (partition != that.partition) {
            return false;
        }
        return hasTopicId() ? topicId.equals(that.topicId) : Objects.equals(topic, that.topic);
    }

    @Override
    public int hashCode() {
        return 31 * partition + (hasTopicId() ? topicId.hashCode() : Objects.hashCode(topic));
    }

    @Override
    public String toString() {
        return (hasTopicId() ? topicId + ":" : "") + topic + "-" + partition;
    }
}
