package io.cairn.metadata.image;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What one committed batch of records changed, handed to subscribers with the images before and after.
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
 */
public record MetadataChanges(Set<String> createdTopics, List<TopicImage> deletedTopics,
                              Map<TopicPartition, PartitionRegistration> changedPartitions,
                              Set<Integer> changedBrokers, Set<ConfigResource> changedConfigs,
                              boolean producerIdsChanged, boolean aclsChanged, boolean scramChanged,
                              boolean controllerChanged, boolean featuresChanged) {

    public MetadataChanges {
        createdTopics = Set.copyOf(createdTopics);
        deletedTopics = List.copyOf(deletedTopics);
        changedPartitions = Map.copyOf(changedPartitions);
        changedBrokers = Set.copyOf(changedBrokers);
        changedConfigs = Set.copyOf(changedConfigs);
    }

    public boolean isEmpty() {
        return createdTopics.isEmpty() && deletedTopics.isEmpty() && changedPartitions.isEmpty()
                && changedBrokers.isEmpty() && changedConfigs.isEmpty() && !producerIdsChanged && !aclsChanged
                && !scramChanged && !controllerChanged && !featuresChanged;
    }
}
