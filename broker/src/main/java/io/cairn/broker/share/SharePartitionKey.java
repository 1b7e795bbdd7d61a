package io.cairn.broker.share;

import io.cairn.wire.protocol.Uuid;
import java.util.Objects;

/**
 * One share-partition of one share group, the unit of state of the share coordinator (Kafka's
 * {@code SharePartitionKey}): a group id, a topic id and a partition index. Its coordinator key, what FindCoordinator
 * key type 2 names and what picks the {@code __share_group_state} partition, is {@code "groupId:topicId:partition"}
 * with the topic id in Kafka's base64 form. Immutable.
 *
 * @param groupId   the share group
 * @param topicId   the topic
 * @param partition the partition index
 */
public record SharePartitionKey(String groupId, Uuid topicId, int partition) {

    public SharePartitionKey {
        Objects.requireNonNull(groupId, "groupId");
        Objects.requireNonNull(topicId, "topicId");
    }

    /** The coordinator key, {@code "groupId:topicId:partition"} (Kafka's {@code asCoordinatorKey}). */
    public String coordinatorKey() {
        return groupId + ":" + topicId + ":" + partition;
    }

    /**
     * Parses a coordinator key as Kafka's {@code SharePartitionKey.validate} and {@code getInstance} do: three parts
     * split at ':', a group id that is not blank, a topic id in base64 and an int partition (the group id and the
     * topic id are trimmed).
     *
     * @throws IllegalArgumentException when {@code key} is null, empty or not of that form
     */
    public static SharePartitionKey parse(String key) {
        if (key == null) {
            throw new IllegalArgumentException("Share partition key cannot be null");
        }
        if (key.isEmpty()) {
            throw new IllegalArgumentException("Share partition key cannot be empty");
        }
        String[] parts = key.split(":");
        if (parts.length != 3) {
            throw new IllegalArgumentException("Share partition key must be in the format <groupId>:<topicId>:"
                + "<partition> but is " + key);
        }
        if (parts[0].trim().isEmpty()) {
            throw new IllegalArgumentException("GroupId must be alphanumeric string");
        }
        Uuid topicId;
        try {
            topicId = Uuid.fromString(parts[1].trim());
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("Invalid topic ID: " + parts[1], e);
        }
        int partition;
        try {
            partition = Integer.parseInt(parts[2]);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("Invalid partition: " + parts[2], e);
        }
        return new SharePartitionKey(parts[0].trim(), topicId, partition);
    }

    /** Kafka's {@code Utils.abs(coordinatorKey.hashCode()) % partitions}: the {@code __share_group_state} partition. */
    public int coordinatorPartition(int partitions) {
        int hash = coordinatorKey().hashCode();
        return (hash == Integer.MIN_VALUE ? 0 : Math.abs(hash)) % partitions;
    }
}
