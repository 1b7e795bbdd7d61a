package io.cairn.metadata.image;

import io.cairn.wire.protocol.Uuid;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A topic and its partitions. Immutable, thread-safe.
 *
 * @param name       the topic name
 * @param id         the topic id
 * @param partitions partition index to its registration (indices 0..n-1)
 */
public record TopicImage(String name, Uuid id, Map<Integer, PartitionRegistration> partitions) {

    public TopicImage {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(id, "id");
        partitions = Map.copyOf(partitions);
    }

    public Optional<PartitionRegistration> partition(int index) {
        return Optional.ofNullable(partitions.get(index));
    }

    /** The replication factor (the replica count of partition 0), 0 for a topic without partitions. */
    public int replicationFactor() {
        PartitionRegistration first = partitions.get(0);
        return first == null ? 0 : first.replicas().size();
    }
}
