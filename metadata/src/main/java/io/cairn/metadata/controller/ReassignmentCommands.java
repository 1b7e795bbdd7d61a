package io.cairn.metadata.controller;

import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicImage;
import io.cairn.metadata.record.PartitionChangeRecord;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AlterPartitionReassignmentsRequestData;
import io.cairn.wire.message.AlterPartitionReassignmentsRequestData.ReassignablePartition;
import io.cairn.wire.message.AlterPartitionReassignmentsRequestData.ReassignableTopic;
import io.cairn.wire.message.AlterPartitionReassignmentsResponseData;
import io.cairn.wire.message.AlterPartitionReassignmentsResponseData.ReassignablePartitionResponse;
import io.cairn.wire.message.AlterPartitionReassignmentsResponseData.ReassignableTopicResponse;
import io.cairn.wire.message.ListPartitionReassignmentsRequestData;
import io.cairn.wire.message.ListPartitionReassignmentsResponseData;
import io.cairn.wire.message.ListPartitionReassignmentsResponseData.OngoingPartitionReassignment;
import io.cairn.wire.message.ListPartitionReassignmentsResponseData.OngoingTopicReassignment;
import io.cairn.wire.protocol.ApiMessage;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Partition reassignments in Kafka's model (KIP-455): AlterPartitionReassignments makes the target replicas
 * replicas at once (target first, then the replicas being removed) and records what is being added and removed;
 * the added replicas join the ISR by catching up, and once the ISR holds every target replica the reassignment is
 * completed by {@link PartitionChange} (removing replicas leave, a target leader is elected if needed). A cancel
 * (null replicas) reverts to the original replicas. ListPartitionReassignments lists what is under way. Pure
 * functions of the image; stateless, thread-safe.
 */
final class ReassignmentCommands {

    /** A per-partition failure with Kafka's error and message (Kafka throws; here it is a value). */
    private record Failure(Errors error, String message) {
    }

    private ReassignmentCommands() {
    }

    static ControllerResult<AlterPartitionReassignmentsResponseData> alter(ControllerLogic logic,
            MetadataImage image, AlterPartitionReassignmentsRequestData request) {
        AlterPartitionReassignmentsResponseData response = new AlterPartitionReassignmentsResponseData()
                .setErrorMessage(null).setAllowReplicationFactorChange(request.allowReplicationFactorChange());
        List<ApiMessage> records = new ArrayList<>();
        for (ReassignableTopic topic : request.topics()) {
            ReassignableTopicResponse topicResponse = new ReassignableTopicResponse().setName(topic.name());
            for (ReassignablePartition partition : topic.partitions()) {
                ReassignablePartitionResponse result = new ReassignablePartitionResponse()
                        .setPartitionIndex(partition.partitionIndex()).setErrorMessage(null);
                Optional<Failure> failure = alterOne(logic, image, topic.name(), partition,
                        request.allowReplicationFactorChange(), records);
                failure.ifPresent(f -> result.setErrorCode(f.error().code()).setErrorMessage(f.message()));
                topicResponse.partitions().add(result);
            }
            response.responses().add(topicResponse);
        }
        if (records.size() > ControllerLogic.MAX_RECORDS_PER_USER_OP) {
            return ControllerResult.of(tooLarge(request));
        }
        return new ControllerResult<>(records, response);
    }

    /** Kafka's answer to an operation of more than 10000 records: POLICY_VIOLATION on top and every partition. */
    private static AlterPartitionReassignmentsResponseData tooLarge(AlterPartitionReassignmentsRequestData request) {
        AlterPartitionReassignmentsResponseData response = new AlterPartitionReassignmentsResponseData()
                .setErrorCode(Errors.POLICY_VIOLATION.code()).setErrorMessage(ControllerLogic.TOO_LARGE)
                .setAllowReplicationFactorChange(request.allowReplicationFactorChange());
        for (ReassignableTopic topic : request.topics()) {
            ReassignableTopicResponse result = new ReassignableTopicResponse().setName(topic.name());
            topic.partitions().forEach(partition -> result.partitions().add(new ReassignablePartitionResponse()
                    .setPartitionIndex(partition.partitionIndex()).setErrorCode(Errors.POLICY_VIOLATION.code())
                    .setErrorMessage(ControllerLogic.TOO_LARGE)));
            response.responses().add(result);
        }
        return response;
    }

    private static Optional<Failure> alterOne(ControllerLogic logic, MetadataImage image, String topicName,
                                              ReassignablePartition target, boolean allowRfChange,
                                              List<ApiMessage> records) {
        Optional<TopicImage> topic = image.topic(topicName);
        if (topic.isEmpty()) {
            return fail(Errors.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find a topic named " + topicName + ".");
        }
        Optional<PartitionRegistration> partition = topic.get().partition(target.partitionIndex());
        if (partition.isEmpty()) {
            return fail(Errors.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition " + topicName + ":"
                    + target.partitionIndex() + ".");
        }
        boolean unclean = logic.uncleanElection(image, topic.get());
        PartitionChange change = logic.withElr(new PartitionChange(topic.get().id(), target.partitionIndex(),
                partition.get(), LeaderCommands.usable(image)), image, topic.get());
        Optional<Failure> failure = target.replicas() == null
                ? cancel(topicName, target.partitionIndex(), partition.get(), unclean, change)
                : change(image, partition.get(), target.replicas(), allowRfChange, change);
        if (failure.isEmpty()) {
            change.build().ifPresent(records::add);
        }
        return failure;
    }

    /** Kafka's PartitionReassignmentRevert: back to the replicas and ISR without the ones being added. */
    private static Optional<Failure> cancel(String topicName, int index, PartitionRegistration p, boolean unclean,
                                            PartitionChange change) {
        if (!p.reassigning()) {
            return fail(Errors.NO_REASSIGNMENT_IN_PROGRESS, Errors.NO_REASSIGNMENT_IN_PROGRESS.message());
        }
        List<Integer> replicas = new ArrayList<>(p.replicas());
        replicas.removeAll(p.addingReplicas());
        List<Integer> isr = new ArrayList<>(p.isr());
        isr.removeAll(p.addingReplicas());
        if (isr.isEmpty()) {
            if (replicas.isEmpty()) {
                return fail(Errors.INVALID_REPLICA_ASSIGNMENT,
                        "Invalid replica assignment: addingReplicas contains all replicas.");
            }
            if (!unclean) {
                return fail(Errors.INVALID_REPLICA_ASSIGNMENT, "Unable to revert partition assignment for "
                        + topicName + ":" + index + " because it would require an unclean leader election.");
            }
            isr.add(replicas.get(0));
        }
        change.election(unclean ? PartitionChange.Election.UNCLEAN : PartitionChange.Election.ONLINE)
                .isr(isr).replicas(replicas).removing(List.of()).adding(List.of());
        return Optional.empty();
    }

    /** Kafka's changePartitionReassignment with PartitionReassignmentReplicas' layout. */
    private static Optional<Failure> change(MetadataImage image, PartitionRegistration p, List<Integer> target,
                                            boolean allowRfChange, PartitionChange change) {
        Optional<Failure> invalid = validateAssignment(image, target);
        if (invalid.isPresent()) {
            return invalid;
        }
        if (!allowRfChange) {
            int current = currentReplicationFactor(p);
            if (current != target.size()) {
                return fail(Errors.INVALID_REPLICATION_FACTOR, "The replication factor is changed from " + current
                        + " to " + target.size());
            }
        }
        Set<Integer> removing = new TreeSet<>(p.replicas());
        removing.removeAll(target);
        Set<Integer> adding = new TreeSet<>(target);
        p.replicas().forEach(adding::remove);
        List<Integer> replicas = new ArrayList<>(target);
        replicas.addAll(removing);
        if (!replicas.equals(p.replicas())) {
            change.replicas(replicas);
        }
        if (!removing.isEmpty()) {
            change.removing(List.copyOf(removing));
        }
        if (!adding.isEmpty()) {
            change.adding(List.copyOf(adding));
        }
        return Optional.empty();
    }

    /** Kafka's validateManualPartitionAssignment for a reassignment target. */
    private static Optional<Failure> validateAssignment(MetadataImage image, List<Integer> target) {
        if (target.isEmpty()) {
            return fail(Errors.INVALID_REPLICA_ASSIGNMENT,
                    "The manual partition assignment includes an empty replica list.");
        }
        List<Integer> sorted = new ArrayList<>(target);
        sorted.sort(Comparator.naturalOrder());
        Integer previous = null;
        for (Integer replica : sorted) {
            if (image.broker(replica).isEmpty()) {
                return fail(Errors.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes broker "
                        + replica + ", but no such broker is registered.");
            }
            if (replica.equals(previous)) {
                return fail(Errors.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes the broker "
                        + replica + " more than once.");
            }
            previous = replica;
        }
        return Optional.empty();
    }

    /** The replica count the partition is headed for (replicas plus adding, less removing, when reassigning). */
    private static int currentReplicationFactor(PartitionRegistration p) {
        if (!p.reassigning()) {
            return p.replicas().size();
        }
        Set<Integer> headed = new HashSet<>(p.replicas());
        headed.addAll(p.addingReplicas());
        p.removingReplicas().forEach(headed::remove);
        return headed.size();
    }

    private static Optional<Failure> fail(Errors error, String message) {
        return Optional.of(new Failure(error, message));
    }

    /** ListPartitionReassignments: every reassigning partition (topics null) or those of the named topics. */
    static ControllerResult<ListPartitionReassignmentsResponseData> list(MetadataImage image,
            ListPartitionReassignmentsRequestData request) {
        ListPartitionReassignmentsResponseData response = new ListPartitionReassignmentsResponseData()
                .setErrorMessage(null);
        if (request.topics() == null) {
            image.topicsById().values().stream().sorted(Comparator.comparing(TopicImage::name))
                    .forEach(topic -> listTopic(response, topic, topic.partitions().keySet().stream().sorted()
                            .toList()));
        } else {
            for (ListPartitionReassignmentsRequestData.ListPartitionReassignmentsTopics named : request.topics()) {
                image.topic(named.name()).ifPresent(topic -> listTopic(response, topic, named.partitionIndexes()));
            }
        }
        return ControllerResult.of(response);
    }

    private static void listTopic(ListPartitionReassignmentsResponseData response, TopicImage topic,
                                  List<Integer> partitions) {
        OngoingTopicReassignment ongoing = new OngoingTopicReassignment().setName(topic.name());
        for (int index : partitions) {
            topic.partition(index).filter(PartitionRegistration::reassigning).ifPresent(p -> ongoing.partitions()
                    .add(new OngoingPartitionReassignment().setPartitionIndex(index)
                            .setReplicas(p.replicas()).setAddingReplicas(p.addingReplicas())
                            .setRemovingReplicas(p.removingReplicas())));
        }
        if (!ongoing.partitions().isEmpty()) {
            response.topics().add(ongoing);
        }
    }

    /**
     * The records of another decision with every reassignment they make completable completed in the same record,
     * as Kafka's PartitionChangeBuilder does for any ISR change: a change whose resulting ISR holds every target
     * replica also drops the removing replicas (and elects a target leader if the leader leaves). Records of
     * partitions not being reassigned pass unchanged.
     */
    static List<ApiMessage> completeReassignments(ControllerLogic logic, MetadataImage image,
                                                  List<ApiMessage> records) {
        List<ApiMessage> out = new ArrayList<>(records.size());
        MetadataImage working = image;
        for (ApiMessage record : records) {
            ApiMessage merged = record instanceof PartitionChangeRecord change ? complete(logic, working, change)
                    : record;
            out.add(merged);
            working = ControllerLogic.apply(working, List.of(merged));
        }
        return out;
    }

    private static PartitionChangeRecord complete(ControllerLogic logic, MetadataImage image,
                                                  PartitionChangeRecord change) {
        Optional<TopicImage> topic = image.topic(change.topicId());
        Optional<PartitionRegistration> before = topic.flatMap(t -> t.partition(change.partitionId()));
        if (before.isEmpty() || !before.get().reassigning()) {
            return change;
        }
        MetadataImage mid = ControllerLogic.apply(image, List.of(change));
        PartitionRegistration p = mid.topic(change.topicId()).flatMap(t -> t.partition(change.partitionId()))
                .orElseThrow();
        Optional<PartitionChangeRecord> completion = logic.withElr(new PartitionChange(change.topicId(),
                change.partitionId(), p, LeaderCommands.usable(mid)), mid, topic.get())
                .election(logic.uncleanElection(mid, topic.get())
                        ? PartitionChange.Election.UNCLEAN : PartitionChange.Election.ONLINE).build();
        if (completion.isEmpty()) {
            return change;
        }
        PartitionChangeRecord c = completion.get();
        return new PartitionChangeRecord().setTopicId(change.topicId()).setPartitionId(change.partitionId())
                .setIsr(c.isr() != null ? c.isr() : change.isr())
                .setLeader(c.leader() != -2 ? c.leader() : change.leader())
                .setReplicas(c.replicas() != null ? c.replicas() : change.replicas())
                .setRemovingReplicas(c.removingReplicas() != null ? c.removingReplicas() : change.removingReplicas())
                .setAddingReplicas(c.addingReplicas() != null ? c.addingReplicas() : change.addingReplicas())
                .setEligibleLeaderReplicas(c.eligibleLeaderReplicas() != null ? c.eligibleLeaderReplicas()
                        : change.eligibleLeaderReplicas())
                .setLastKnownElr(c.lastKnownElr() != null ? c.lastKnownElr() : change.lastKnownElr());
    }
}
