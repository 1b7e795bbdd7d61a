package io.cairn.broker.group;

import io.cairn.broker.group.OffsetManager.CommittedOffset;
import io.cairn.broker.group.OffsetManager.TopicPartitionKey;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The transactional offset commits of one shard whose transaction has not ended yet (Kafka's
 * {@code pendingTransactionalOffsets} and {@code openTransactionsByGroup} of {@code OffsetMetadataManager}): by
 * producer, then group, then partition, and the producers with an open transaction per group. A COMMIT marker moves
 * a producer's offsets into the committed ones, an ABORT marker drops them.
 *
 * <p>Thread-safety: confined to the shard's thread, like {@link OffsetManager} which owns it.
 */
final class PendingTransactionalOffsets {

    private final Map<Long, Map<String, TreeMap<TopicPartitionKey, CommittedOffset>>> byProducer = new HashMap<>();
    private final Map<String, Set<Long>> openByGroup = new HashMap<>();

    /** Adds a pending offset of {@code producerId}'s transaction (a later one of the same partition replaces it). */
    void put(long producerId, String groupId, TopicPartitionKey key, CommittedOffset offset) {
        byProducer.computeIfAbsent(producerId, p -> new HashMap<>()).computeIfAbsent(groupId, g -> new TreeMap<>())
            .put(key, offset);
        openByGroup.computeIfAbsent(groupId, g -> new HashSet<>()).add(producerId);
    }

    /** Ends {@code producerId}'s transaction: its pending offsets by group (empty when it had none). */
    Map<String, TreeMap<TopicPartitionKey, CommittedOffset>> end(long producerId) {
        Map<String, TreeMap<TopicPartitionKey, CommittedOffset>> ended = byProducer.remove(producerId);
        if (ended == null) {
            return Map.of();
        }
        for (String groupId : ended.keySet()) {
            Set<Long> open = openByGroup.get(groupId);
            if (open != null) {
                open.remove(producerId);
                if (open.isEmpty()) {
                    openByGroup.remove(groupId);
                }
            }
        }
        return ended;
    }

    /** Whether an open transaction holds an offset of this partition for the group (OffsetFetch's require_stable). */
    boolean hasPending(String groupId, TopicPartitionKey key) {
        Set<Long> open = openByGroup.get(groupId);
        if (open == null) {
            return false;
        }
        for (long producerId : open) {
            TreeMap<TopicPartitionKey, CommittedOffset> offsets = byProducer.getOrDefault(producerId, Map.of())
                .get(groupId);
            if (offsets != null && offsets.containsKey(key)) {
                return true;
            }
        }
        return false;
    }

    /** Whether the group has an open transaction (such a group is not removed when its offsets expire). */
    boolean hasOpenTransaction(String groupId) {
        return openByGroup.containsKey(groupId);
    }

    /** The partitions of the group's open transactions. */
    Set<TopicPartitionKey> partitions(String groupId) {
        Set<TopicPartitionKey> keys = new HashSet<>();
        for (long producerId : openByGroup.getOrDefault(groupId, Set.of())) {
            keys.addAll(byProducer.getOrDefault(producerId, Map.of()).getOrDefault(groupId, new TreeMap<>())
                .keySet());
        }
        return keys;
    }

    /** A tombstone of the partition also drops every pending offset of it (Kafka's replay of a tombstone). */
    void remove(String groupId, TopicPartitionKey key) {
        for (long producerId : openByGroup.getOrDefault(groupId, Set.of())) {
            TreeMap<TopicPartitionKey, CommittedOffset> offsets = byProducer.getOrDefault(producerId, Map.of())
                .get(groupId);
            if (offsets != null) {
                offsets.remove(key);
            }
        }
    }

    /** Groups with an open transaction. */
    Set<String> groupIds() {
        return openByGroup.keySet();
    }
}
