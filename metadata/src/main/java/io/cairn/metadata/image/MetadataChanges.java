package io.cairn.metadata.image;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * What one committed batch of records changed, handed to subscribers with the images before and after; or, when a
 * node loads a snapshot instead of replaying the records, what differs between the two images ({@link #between}).
 * Immutable, thread-safe.
 *
 * @param createdTopics      names of the topics created
 * @param deletedTopics      the topics deleted, as they were before deletion
 * @param changedPartitions  new state of every partition created or changed (leader, ISR, replicas, epochs)
 * @param changedBrokers     ids of the brokers registered, unregistered, fenced, unfenced or shutting down
 * @param changedConfigs     the resources whose configs changed
 * @param producerIdsChanged true when a producer id block was allocated
 * @param aclsChanged        true when an ACL was added or removed
 * @param scramChanged       true when a SCRAM credential was set or removed
 * @param controllerChanged  true when a new controller became active (or the cluster id was set)
 * @param featuresChanged    true when a feature level was finalized or changed
 * @param quotasChanged      true when a client quota was set or removed
 */
public record MetadataChanges(Set<String> createdTopics, List<TopicImage> deletedTopics,
                              Map<TopicPartition, PartitionRegistration> changedPartitions,
                              Set<Integer> changedBrokers, Set<ConfigResource> changedConfigs,
                              boolean producerIdsChanged, boolean aclsChanged, boolean scramChanged,
                              boolean controllerChanged, boolean featuresChanged, boolean quotasChanged) {

    public MetadataChanges {
        createdTopics = Set.copyOf(createdTopics);
        deletedTopics = List.copyOf(deletedTopics);
        changedPartitions = Map.copyOf(changedPartitions);
        changedBrokers = Set.copyOf(changedBrokers);
        changedConfigs = Set.copyOf(changedConfigs);
    }

    /**
     * What differs between two images, in the terms a replay of the records between them would report: a node that
     * loads a snapshot (a lagging listener or follower installing the leader's) publishes this, so its subscribers
     * learn of topics deleted, partitions moved and configs changed meanwhile, not only of what exists now (Kafka
     * publishes a snapshot's image as a delta against the previous one). A topic is identified by its id: a name
     * reused by a new topic reads as the old topic deleted and a new one created.
     */
    public static MetadataChanges between(MetadataImage previous, MetadataImage next) {
        Set<String> created = new LinkedHashSet<>();
        Map<TopicPartition, PartitionRegistration> partitions = new LinkedHashMap<>();
        for (TopicImage topic : next.topicsById().values()) {
            TopicImage before = previous.topicsById().get(topic.id());
            if (before == null) {
                created.add(topic.name());
            }
            topic.partitions().forEach((index, registration) -> {
                if (before == null || !registration.equals(before.partitions().get(index))) {
                    partitions.put(new TopicPartition(topic.name(), index), registration);
                }
            });
        }
        List<TopicImage> deleted = new ArrayList<>();
        for (TopicImage topic : previous.topicsById().values()) {
            if (!next.topicsById().containsKey(topic.id())) {
                deleted.add(topic);
            }
        }
        return new MetadataChanges(created, deleted, partitions, differingKeys(previous.brokers(), next.brokers()),
                differingKeys(previous.configs(), next.configs()),
                previous.nextProducerId() != next.nextProducerId(), !previous.acls().equals(next.acls()),
                !previous.scram().equals(next.scram()),
                previous.controllerId() != next.controllerId()
                        || previous.controllerTerm() != next.controllerTerm()
                        || !previous.clusterId().equals(next.clusterId()),
                !previous.features().equals(next.features()),
                !previous.clientQuotas().equals(next.clientQuotas()));
    }

    /** The keys present in only one map or mapped to different values. */
    private static <K> Set<K> differingKeys(Map<K, ?> previous, Map<K, ?> next) {
        Set<K> keys = new LinkedHashSet<>();
        previous.forEach((key, value) -> {
            if (!Objects.equals(value, next.get(key))) {
                keys.add(key);
            }
        });
        next.forEach((key, value) -> {
            if (!previous.containsKey(key)) {
                keys.add(key);
            }
        });
        return keys;
    }

    public boolean isEmpty() {
        return createdTopics.isEmpty() && deletedTopics.isEmpty() && changedPartitions.isEmpty()
                && changedBrokers.isEmpty() && changedConfigs.isEmpty() && !producerIdsChanged && !aclsChanged
                && !scramChanged && !controllerChanged && !featuresChanged && !quotasChanged;
    }
}
