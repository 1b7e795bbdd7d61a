package io.cairn.broker.group.share;

import io.cairn.wire.protocol.Uuid;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Which share-partitions of one share group have state at the share coordinator (Kafka's
 * {@code ShareGroupStatePartitionMetadataInfo}, the ShareGroupStatePartitionMetadata record): those whose
 * InitializeShareGroupState is under way (with when it started, kept in memory only as in Kafka), those initialized,
 * and the topics whose state is being deleted. Only initialized partitions are assigned to members. Immutable.
 */
public record SharePartitionStates(Map<Uuid, Topic> initializing, Map<Uuid, Topic> initialized,
                                   Map<Uuid, String> deleting) {

    /** The partitions of one topic, and when they were put in this state (replay or write time). */
    public record Topic(String name, Set<Integer> partitions, long timestampMs) {
        public Topic {
            partitions = Set.copyOf(partitions);
        }
    }

    public static final SharePartitionStates EMPTY = new SharePartitionStates(Map.of(), Map.of(), Map.of());

    public SharePartitionStates {
        initializing = Map.copyOf(initializing);
        initialized = Map.copyOf(initialized);
        deleting = Map.copyOf(deleting);
    }

    /** The initialized partitions, by topic id. */
    public Map<Uuid, Set<Integer>> initializedPartitions() {
        Map<Uuid, Set<Integer>> partitions = new HashMap<>();
        initialized.forEach((topic, value) -> partitions.put(topic, value.partitions()));
        return partitions;
    }

    /** Whether the partition is initialized (assignable). */
    public boolean isInitialized(Uuid topicId, int partition) {
        Topic topic = initialized.get(topicId);
        return topic != null && topic.partitions().contains(partition);
    }

    /** These states with {@code added} partitions now initializing (merged per topic). */
    SharePartitionStates withInitializing(Map<Uuid, Topic> added) {
        return new SharePartitionStates(combine(initializing, added), initialized, deleting);
    }

    /**
     * These states once {@code done} partitions are initialized (Kafka's {@code initializeShareGroupState}): they
     * join the initialized ones and leave the initializing ones.
     */
    SharePartitionStates withInitialized(Map<Uuid, Topic> done) {
        return new SharePartitionStates(remove(initializing, done), combine(initialized, done), deleting);
    }

    /** These states once initializing {@code failed} partitions failed (Kafka's uninitializeShareGroupState). */
    SharePartitionStates withoutInitializing(Map<Uuid, Topic> failed) {
        return new SharePartitionStates(remove(initializing, failed), initialized, deleting);
    }

    static Map<Uuid, Topic> combine(Map<Uuid, Topic> a, Map<Uuid, Topic> b) {
        Map<Uuid, Topic> combined = new HashMap<>(a);
        b.forEach((topic, value) -> combined.merge(topic, value, (x, y) -> {
            Set<Integer> union = new HashSet<>(x.partitions());
            union.addAll(y.partitions());
            return new Topic(y.name(), union, y.timestampMs());
        }));
        return combined;
    }

    private static Map<Uuid, Topic> remove(Map<Uuid, Topic> from, Map<Uuid, Topic> removed) {
        Map<Uuid, Topic> result = new HashMap<>(from);
        removed.forEach((topic, value) -> {
            Topic current = result.get(topic);
            if (current != null) {
                Set<Integer> left = new HashSet<>(current.partitions());
                left.removeAll(value.partitions());
                if (left.isEmpty()) {
                    result.remove(topic);
                } else {
                    result.put(topic, new Topic(current.name(), left, current.timestampMs()));
                }
            }
        });
        return result;
    }
}
