package io.cairn.broker.group.share;

import io.cairn.broker.group.consumer.ConsumerGroupTopics;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AlterShareGroupOffsetsRequestData;
import io.cairn.wire.message.AlterShareGroupOffsetsResponseData;
import io.cairn.wire.message.DeleteShareGroupOffsetsRequestData;
import io.cairn.wire.message.DeleteShareGroupOffsetsResponseData;
import io.cairn.wire.message.DeleteShareGroupStateRequestData;
import io.cairn.wire.message.InitializeShareGroupStateRequestData;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The share group offsets admin operations' coordinator side, on the {@link SharePartitionStates} of a group
 * (Kafka 4.1's {@code GroupMetadataManager.completeAlterShareGroupOffsets}, {@code
 * sharePartitionsEligibleForOffsetDeletion}, {@code completeDeleteShareGroupOffsets} and {@code
 * shareGroupBuildPartitionDeleteRequest}). Pure functions: the caller records the new states.
 */
final class ShareGroupOffsets {

    /** Kafka's message for a topic of DeleteShareGroupOffsets the group has no state for. */
    static final String NO_OFFSETS_TO_DELETE = "There is no offset information to delete.";

    private ShareGroupOffsets() {
    }

    /**
     * AlterShareGroupOffsets of an Empty group: the answer (UNKNOWN_TOPIC_OR_PARTITION for an unknown topic or a
     * partition past the topic's count), the existing share-partitions that become initializing, and the
     * InitializeShareGroupState that sets their start offsets (state epoch = the group epoch).
     */
    record Alter(AlterShareGroupOffsetsResponseData response, Map<Uuid, SharePartitionStates.Topic> initializing,
                 InitializeShareGroupStateRequestData initialize) {
    }

    static Alter alter(String groupId, int groupEpoch, AlterShareGroupOffsetsRequestData request,
                       ConsumerGroupTopics topics, long nowMs) {
        AlterShareGroupOffsetsResponseData response = new AlterShareGroupOffsetsResponseData();
        Map<Uuid, SharePartitionStates.Topic> initializing = new LinkedHashMap<>();
        InitializeShareGroupStateRequestData initialize = new InitializeShareGroupStateRequestData()
            .setGroupId(groupId);
        for (AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestTopic topic : request.topics()) {
            Uuid topicId = topics.topicId(topic.topicName());
            AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponseTopic answer =
                new AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponseTopic()
                    .setTopicName(topic.topicName()).setTopicId(topicId == null ? Uuid.ZERO : topicId);
            response.responses().add(answer);
            int count = topicId == null ? -1 : topics.numPartitions(topicId);
            Set<Integer> valid = new TreeSet<>();
            InitializeShareGroupStateRequestData.InitializeStateData state =
                new InitializeShareGroupStateRequestData.InitializeStateData().setTopicId(topicId);
            for (AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestPartition p : topic.partitions()) {
                AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponsePartition result =
                    new AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponsePartition()
                        .setPartitionIndex(p.partitionIndex());
                if (topicId != null && p.partitionIndex() >= 0 && p.partitionIndex() < count) {
                    valid.add(p.partitionIndex());
                    state.partitions().add(new InitializeShareGroupStateRequestData.PartitionData()
                        .setPartition(p.partitionIndex()).setStateEpoch(groupEpoch).setStartOffset(p.startOffset()));
                } else {
                    result.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code())
                        .setErrorMessage(Errors.UNKNOWN_TOPIC_OR_PARTITION.message());
                }
                answer.partitions().add(result);
            }
            if (!valid.isEmpty()) {
                initializing.merge(topicId, new SharePartitionStates.Topic(topic.topicName(), valid, nowMs),
                    (a, b) -> {
                        Set<Integer> union = new HashSet<>(a.partitions());
                        union.addAll(b.partitions());
                        return new SharePartitionStates.Topic(a.name(), union, nowMs);
                    });
                initialize.topics().add(state);
            }
        }
        return new Alter(response, initializing, initialize);
    }

    /** The states once {@code added} share-partitions are initializing: no longer deleting (Kafka's rule). */
    static SharePartitionStates initializing(SharePartitionStates current,
                                             Map<Uuid, SharePartitionStates.Topic> added) {
        Map<Uuid, String> deleting = new HashMap<>(current.deleting());
        deleting.keySet().removeAll(added.keySet());
        return new SharePartitionStates(current.initializing(), current.initialized(), deleting)
            .withInitializing(added);
    }

    /**
     * The start of DeleteShareGroupOffsets for an Empty group: the topics it cannot delete (UNKNOWN_TOPIC_OR_PARTITION
     * for an unknown topic or one without state), the states with the others moved from initialized to deleting, and
     * the DeleteShareGroupState of their share-partitions (null when none); a topic already deleting is asked again
     * for all its partitions.
     */
    record DeleteStart(List<DeleteShareGroupOffsetsResponseData.DeleteShareGroupOffsetsResponseTopic> errors,
                       SharePartitionStates next, DeleteShareGroupStateRequestData request) {
    }

    static DeleteStart deleteStart(String groupId, DeleteShareGroupOffsetsRequestData request,
                                   SharePartitionStates current, ConsumerGroupTopics topics) {
        List<DeleteShareGroupOffsetsResponseData.DeleteShareGroupOffsetsResponseTopic> errors = new ArrayList<>();
        Map<Uuid, SharePartitionStates.Topic> initialized = new HashMap<>(current.initialized());
        Map<Uuid, String> deleting = new HashMap<>(current.deleting());
        DeleteShareGroupStateRequestData delete = new DeleteShareGroupStateRequestData().setGroupId(groupId);
        for (DeleteShareGroupOffsetsRequestData.DeleteShareGroupOffsetsRequestTopic topic : request.topics()) {
            Uuid topicId = topics.topicId(topic.topicName());
            if (topicId == null) {
                errors.add(new DeleteShareGroupOffsetsResponseData.DeleteShareGroupOffsetsResponseTopic()
                    .setTopicName(topic.topicName()).setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code())
                    .setErrorMessage(Errors.UNKNOWN_TOPIC_OR_PARTITION.message()));
            } else if (initialized.containsKey(topicId)) {
                delete.topics().add(deleteState(topicId, new TreeSet<>(initialized.remove(topicId).partitions())));
                deleting.put(topicId, topic.topicName());
            } else if (deleting.containsKey(topicId)) {
                delete.topics().add(deleteState(topicId, allPartitions(topics.numPartitions(topicId))));
            } else {
                errors.add(new DeleteShareGroupOffsetsResponseData.DeleteShareGroupOffsetsResponseTopic()
                    .setTopicName(topic.topicName()).setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code())
                    .setErrorMessage(NO_OFFSETS_TO_DELETE));
            }
        }
        return new DeleteStart(errors, new SharePartitionStates(current.initializing(), initialized, deleting),
            delete.topics().isEmpty() ? null : delete);
    }

    /**
     * DeleteGroups of an Empty share group (Kafka's {@code shareGroupBuildPartitionDeleteRequest}): every initialized
     * and initializing share-partition, and every partition of a topic still deleting, is to be deleted; the states
     * keep them all as deleting until the group goes. The request is null when there is nothing to delete.
     */
    record GroupDelete(SharePartitionStates next, DeleteShareGroupStateRequestData request) {
    }

    static GroupDelete groupDelete(String groupId, SharePartitionStates current, ConsumerGroupTopics topics) {
        Map<Uuid, Set<Integer>> candidates = new TreeMap<>(ShareGroupRecords.TOPIC_ORDER);
        Map<Uuid, String> names = new HashMap<>();
        SharePartitionStates.combine(current.initialized(), current.initializing()).forEach((id, t) -> {
            candidates.computeIfAbsent(id, k -> new TreeSet<>()).addAll(t.partitions());
            names.put(id, t.name());
        });
        current.deleting().keySet().forEach(id -> {
            String name = topics.topicName(id);
            if (name != null) {
                candidates.computeIfAbsent(id, k -> new TreeSet<>()).addAll(allPartitions(topics.numPartitions(id)));
                names.put(id, name);
            }
        });
        SharePartitionStates next = new SharePartitionStates(Map.of(), Map.of(), names);
        if (candidates.isEmpty()) {
            return new GroupDelete(next, null);
        }
        DeleteShareGroupStateRequestData request = new DeleteShareGroupStateRequestData().setGroupId(groupId);
        candidates.forEach((id, partitions) -> request.topics().add(deleteState(id, partitions)));
        return new GroupDelete(next, request);
    }

    /**
     * Topics deleted from the cluster (Kafka's {@code maybeCleanupShareGroupState}): the group's initialized and
     * initializing share-partitions of the {@code deleted} topics (by id, with their names) move to deleting, and
     * their DeleteShareGroupState is to be sent. The request is null, and the states unchanged, when the group has
     * none of them.
     */
    static GroupDelete topicsDeleted(String groupId, SharePartitionStates current, Map<Uuid, String> deleted) {
        Map<Uuid, Set<Integer>> candidates = new TreeMap<>(ShareGroupRecords.TOPIC_ORDER);
        Map<Uuid, SharePartitionStates.Topic> initializing = new HashMap<>(current.initializing());
        Map<Uuid, SharePartitionStates.Topic> initialized = new HashMap<>(current.initialized());
        Map<Uuid, String> deleting = new HashMap<>(current.deleting());
        deleted.forEach((id, name) -> {
            for (Map<Uuid, SharePartitionStates.Topic> from : List.of(initialized, initializing)) {
                SharePartitionStates.Topic topic = from.remove(id);
                if (topic != null) {
                    candidates.computeIfAbsent(id, k -> new TreeSet<>()).addAll(topic.partitions());
                    deleting.put(id, name);
                }
            }
        });
        if (candidates.isEmpty()) {
            return new GroupDelete(current, null);
        }
        DeleteShareGroupStateRequestData request = new DeleteShareGroupStateRequestData().setGroupId(groupId);
        candidates.forEach((id, partitions) -> request.topics().add(deleteState(id, partitions)));
        return new GroupDelete(new SharePartitionStates(initializing, initialized, deleting), request);
    }

    private static DeleteShareGroupStateRequestData.DeleteStateData deleteState(Uuid topicId, Set<Integer> partitions) {
        DeleteShareGroupStateRequestData.DeleteStateData data = new DeleteShareGroupStateRequestData.DeleteStateData()
            .setTopicId(topicId);
        new TreeSet<>(partitions).forEach(p -> data.partitions().add(
            new DeleteShareGroupStateRequestData.PartitionData().setPartition(p)));
        return data;
    }

    private static Set<Integer> allPartitions(int count) {
        Set<Integer> all = new TreeSet<>();
        for (int p = 0; p < count; p++) {
            all.add(p);
        }
        return all;
    }
}
