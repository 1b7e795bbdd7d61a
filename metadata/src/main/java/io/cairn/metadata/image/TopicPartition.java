package io.cairn.metadata.image;

import java.util.Objects;

/**
 * A partition named by topic name and index. Immutable, thread-safe.
 *
 * @param topic     the topic name
 * @param partition the partition index
 */
public record TopicPartition(String topic, int partition) {

    public TopicPartition {
        Objects.requireNonNull(topic, "topic");
    }

    @Override
    public String toString() {
        return topic + "-" + partition;
    }
}
