package io.cairn.metadata.controller;

import io.cairn.metadata.controller.ControllerMutationQuotas.MutationQuota;
import io.cairn.metadata.image.BrokerRegistration;
import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.TopicImage;
import io.cairn.metadata.record.ConfigRecord;
import io.cairn.metadata.record.PartitionRecord;
import io.cairn.metadata.record.RemoveTopicRecord;
import io.cairn.metadata.record.TopicRecord;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.CreatePartitionsRequestData;
import io.cairn.wire.message.CreatePartitionsResponseData;
import io.cairn.wire.message.CreateTopicsRequestData;
import io.cairn.wire.message.CreateTopicsResponseData;
import io.cairn.wire.message.DeleteTopicsRequestData;
import io.cairn.wire.message.DeleteTopicsResponseData;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * Topic and partition commands of the controller: CreateTopics, DeleteTopics and CreatePartitions (AlterPartition
 * is {@link AlterPartitionCommands}), as pure functions of the image and a topic-id generator, with Kafka's error
 * codes and messages. Stateless apart from its settings; thread-safe when the generator is (the random one is).
 */
final class TopicCommands {

    private final ControllerSettings settings;
    private final Supplier<Uuid> topicIds;

    TopicCommands(ControllerSettings settings, Supplier<Uuid> topicIds) {
        this.settings = settings;
        this.topicIds = topicIds;
    }

    ControllerResult<CreateTopicsResponseData> createTopics(MetadataImage image, CreateTopicsRequestData request) {
        return createTopics(image, request, MutationQuota.UNBOUNDED);
    }

    /**
     * CreateTopics with each valid topic's partitions counted against {@code quota} (Kafka checks it after every other
     * check of the topic, validate-only requests included); a refused topic gets THROTTLING_QUOTA_EXCEEDED.
     */
    ControllerResult<CreateTopicsResponseData> createTopics(MetadataImage image, CreateTopicsRequestData request,
                                                            MutationQuota quota) {
        CreateTopicsResponseData response = new CreateTopicsResponseData();
        List<ApiMessage> records = new ArrayList<>();
        MetadataImage working = image;
        Set<String> seen = new HashSet<>();
        Set<String> duplicates = new HashSet<>();
        for (CreateTopicsRequestData.CreatableTopic topic : request.topics()) {
            if (!seen.add(topic.name())) {
                duplicates.add(topic.name());
            }
        }
        int planned = 0;
        for (CreateTopicsRequestData.CreatableTopic topic : request.topics()) {
            CreateTopicsResponseData.CreatableTopicResult result = new CreateTopicsResponseData.CreatableTopicResult()
                    .setName(topic.name());
            response.topics().add(result);
            if (duplicates.contains(topic.name())) {
                result.setErrorCode(Errors.INVALID_REQUEST.code())
                        .setErrorMessage("Duplicate topic name.");
                continue;
            }
            List<ApiMessage> topicRecords;
            try {
                topicRecords = createTopic(working, topic, result, quota);
            } catch (TooLarge e) {
                return ControllerResult.of(tooLarge(request));
            }
            planned += topicRecords.size();
            if (planned > ControllerLogic.MAX_RECORDS_PER_USER_OP) {
                return ControllerResult.of(tooLarge(request));
            }
            if (!topicRecords.isEmpty() && !request.validateOnly()) {
                records.addAll(topicRecords);
                working = ControllerLogic.apply(working, topicRecords);
            }
        }
        return new ControllerResult<>(records, response);
    }

    /**
     * Kafka's answer to a request whose records would pass {@link ControllerLogic#MAX_RECORDS_PER_USER_OP},
     * validate-only ones included: POLICY_VIOLATION for every topic and nothing written. Kafka finds out when its
     * bounded list overflows; we check a topic's partition count before placing them, so that a count of two billion
     * allocates nothing.
     */
    private static CreateTopicsResponseData tooLarge(CreateTopicsRequestData request) {
        CreateTopicsResponseData response = new CreateTopicsResponseData();
        request.topics().forEach(t -> response.topics().add(new CreateTopicsResponseData.CreatableTopicResult()
                .setName(t.name()).setErrorCode(Errors.POLICY_VIOLATION.code())
                .setErrorMessage(ControllerLogic.TOO_LARGE)));
        return response;
    }

    /** The same for CreatePartitions. */
    private static CreatePartitionsResponseData tooLarge(CreatePartitionsRequestData request) {
        CreatePartitionsResponseData response = new CreatePartitionsResponseData();
        request.topics().forEach(t -> response.results().add(new CreatePartitionsResponseData
                .CreatePartitionsTopicResult().setName(t.name()).setErrorCode(Errors.POLICY_VIOLATION.code())
                .setErrorMessage(ControllerLogic.TOO_LARGE)));
        return response;
    }

    /** A topic whose partitions alone would pass {@link ControllerLogic#MAX_RECORDS_PER_USER_OP}. */
    private static final class TooLarge extends RuntimeException {
        private static final long serialVersionUID = 1L;

        TooLarge() {
            super(ControllerLogic.TOO_LARGE, null, false, false);
        }
    }

    private List<ApiMessage> createTopic(MetadataImage image, CreateTopicsRequestData.CreatableTopic topic,
                                         CreateTopicsResponseData.CreatableTopicResult result, MutationQuota quota) {
        String name = topic.name();
        Optional<String> illegal = TopicNames.validate(name);
        if (illegal.isPresent()) {
            return fail(result, Errors.INVALID_TOPIC_EXCEPTION, illegal.get());
        }
        if (image.topic(name).isPresent()) {
            return fail(result, Errors.TOPIC_ALREADY_EXISTS, "Topic '" + name + "' already exists.");
        }
        String unified = TopicNames.unifyCollisionChars(name);
        for (String existing : image.topicIds().keySet()) {
            if (TopicNames.unifyCollisionChars(existing).equals(unified)) {
                return fail(result, Errors.INVALID_TOPIC_EXCEPTION,
                        "Topic '" + name + "' collides with existing topic: " + existing);
            }
        }
        Map<String, String> configs = new LinkedHashMap<>();
        topic.configs().forEach(c -> configs.put(c.name(), c.value()));
        Optional<String> badConfig = TopicConfigs.validate(configs);
        if (badConfig.isPresent()) {
            return fail(result, Errors.INVALID_CONFIG, badConfig.get());
        }
        List<List<Integer>> assignment;
        if (!topic.assignments().isEmpty()) {
            if (topic.numPartitions() != -1 || topic.replicationFactor() != -1) {
                return fail(result, Errors.INVALID_REQUEST, "Both numPartitions or replicationFactor and "
                        + "replicasAssignments were set. Both cannot be used at the same time.");
            }
            Optional<String> invalid = checkManualAssignment(image, topic);
            if (invalid.isPresent()) {
                return fail(result, Errors.INVALID_REPLICA_ASSIGNMENT, invalid.get());
            }
            assignment = new ArrayList<>();
            topic.assignments().stream().sorted(Comparator.comparingInt(a -> a.partitionIndex()))
                    .forEach(a -> assignment.add(List.copyOf(a.brokerIds())));
        } else {
            int partitions = topic.numPartitions() == -1 ? settings.defaultNumPartitions() : topic.numPartitions();
            int replication = topic.replicationFactor() == -1 ? settings.defaultReplicationFactor()
                    : topic.replicationFactor();
            if (replication <= 0) {
                return fail(result, Errors.INVALID_REPLICATION_FACTOR,
                        "Replication factor must be larger than 0, or -1 to use the default value.");
            }
            if (partitions <= 0) {
                return fail(result, Errors.INVALID_PARTITIONS,
                        "Number of partitions was set to an invalid non-positive value.");
            }
            List<BrokerRegistration> candidates = placementCandidates(image);
            Optional<String> refused = ReplicaPlacer.check(candidates, replication);
            if (refused.isPresent()) {
                return fail(result, Errors.INVALID_REPLICATION_FACTOR, "Unable to replicate the partition "
                        + replication + " time(s): " + refused.get());
            }
            if (partitions > ControllerLogic.MAX_RECORDS_PER_USER_OP) {
                throw new TooLarge();
            }
            assignment = ReplicaPlacer.place(candidates, 0, partitions, replication, image.partitionCount());
        }
        for (List<Integer> replicas : assignment) {
            if (initialIsr(image, replicas).isEmpty()) {
                return fail(result, Errors.INVALID_REPLICATION_FACTOR, noActiveReplica(replicas.size()));
            }
        }
        if (!quota.record(assignment.size())) {
            return fail(result, Errors.THROTTLING_QUOTA_EXCEEDED, Errors.THROTTLING_QUOTA_EXCEEDED.message());
        }
        Uuid topicId = topicId(image.topicsById().keySet());
        List<ApiMessage> records = new ArrayList<>();
        records.add(new TopicRecord().setName(name).setTopicId(topicId));
        configs.forEach((key, value) -> records.add(new ConfigRecord().setResourceType(ConfigResource.TOPIC)
                .setResourceName(name).setName(key).setValue(value)));
        for (int p = 0; p < assignment.size(); p++) {
            records.add(newPartition(image, topicId, p, assignment.get(p)));
        }
        result.setTopicId(topicId).setNumPartitions(assignment.size())
                .setReplicationFactor((short) assignment.get(0).size());
        return records;
    }

    private static Optional<String> checkManualAssignment(MetadataImage image,
                                                          CreateTopicsRequestData.CreatableTopic topic) {
        Set<Integer> indices = new HashSet<>();
        OptionalInt replication = OptionalInt.empty();
        for (CreateTopicsRequestData.CreatableReplicaAssignment a : topic.assignments()) {
            if (!indices.add(a.partitionIndex())) {
                return Optional.of("Found multiple manual partition assignments for partition "
                        + a.partitionIndex());
            }
            Optional<String> problem = checkReplicas(image, a.brokerIds(), replication, a.partitionIndex());
            if (problem.isPresent()) {
                return problem;
            }
            replication = OptionalInt.of(a.brokerIds().size());
        }
        for (int i = 0; i < indices.size(); i++) {
            if (!indices.contains(i)) {
                return Optional.of("partitions should be a consecutive 0-based integer sequence");
            }
        }
        return Optional.empty();
    }

    /**
     * Kafka's checks of one manually assigned partition (INVALID_REPLICA_ASSIGNMENT, with its messages): replicas
     * given, each a registered broker named once, as many as the other partitions have, and at least one of them
     * neither fenced nor in controlled shutdown (it becomes the leader).
     */
    static Optional<String> checkReplicas(MetadataImage image, List<Integer> replicas, OptionalInt replication,
                                          int partitionIndex) {
        if (replicas.isEmpty()) {
            return Optional.of("The manual partition assignment includes an empty replica list.");
        }
        List<Integer> sorted = new ArrayList<>(replicas);
        sorted.sort(Integer::compare);
        for (int i = 0; i < sorted.size(); i++) {
            int id = sorted.get(i);
            if (image.broker(id).isEmpty()) {
                return Optional.of("The manual partition assignment includes broker " + id
                        + ", but no such broker is registered.");
            }
            if (i > 0 && sorted.get(i - 1) == id) {
                return Optional.of("The manual partition assignment includes the broker " + id + " more than once.");
            }
        }
        if (replication.isPresent() && replicas.size() != replication.getAsInt()) {
            return Optional.of("The manual partition assignment includes a partition with " + replicas.size()
                    + " replica(s), but this is not consistent with previous partitions, which have "
                    + replication.getAsInt() + " replica(s).");
        }
        if (replicas.stream().noneMatch(id -> image.broker(id).map(BrokerRegistration::usable).orElse(false))) {
            return Optional.of("All brokers specified in the manual partition assignment for partition "
                    + partitionIndex + " are fenced or in controlled shutdown.");
        }
        return Optional.empty();
    }

    /**
     * The first PartitionRecord of a new partition: the ISR is its active replicas (neither fenced nor in controlled
     * shutdown, Kafka's {@code isActive}), the leader the first of them. Callers check the ISR is not empty.
     */
    private static PartitionRecord newPartition(MetadataImage image, Uuid topicId, int index, List<Integer> replicas) {
        List<Integer> isr = initialIsr(image, replicas);
        return new PartitionRecord().setTopicId(topicId).setPartitionId(index).setReplicas(List.copyOf(replicas))
                .setIsr(isr).setLeader(isr.get(0)).setLeaderEpoch(0).setPartitionEpoch(0);
    }

    private static List<Integer> initialIsr(MetadataImage image, List<Integer> replicas) {
        return replicas.stream().filter(id -> image.broker(id).map(BrokerRegistration::usable).orElse(false))
                .toList();
    }

    /** Kafka's refusal of a placed partition none of whose replicas is active (the placer never gives one). */
    private static String noActiveReplica(int replication) {
        return "Unable to replicate the partition " + replication
                + " time(s): All brokers are currently fenced or in controlled shutdown.";
    }

    ControllerResult<DeleteTopicsResponseData> deleteTopics(MetadataImage image, DeleteTopicsRequestData request) {
        return deleteTopics(image, request, MutationQuota.UNBOUNDED);
    }

    /** DeleteTopics with each topic's partitions counted against {@code quota} once it is found. */
    ControllerResult<DeleteTopicsResponseData> deleteTopics(MetadataImage image, DeleteTopicsRequestData request,
                                                            MutationQuota quota) {
        DeleteTopicsResponseData response = new DeleteTopicsResponseData();
        List<ApiMessage> records = new ArrayList<>();
        Set<Uuid> deleted = new HashSet<>();
        List<DeleteTopicsRequestData.DeleteTopicState> targets = new ArrayList<>(request.topics());
        request.topicNames().forEach(n -> targets.add(new DeleteTopicsRequestData.DeleteTopicState().setName(n)));
        for (DeleteTopicsRequestData.DeleteTopicState target : targets) {
            DeleteTopicsResponseData.DeletableTopicResult result = new DeleteTopicsResponseData.DeletableTopicResult()
                    .setName(target.name()).setTopicId(target.topicId());
            response.responses().add(result);
            Optional<TopicImage> topic = target.name() != null ? image.topic(target.name())
                    : image.topic(target.topicId());
            if (!settings.deleteTopicEnable()) {
                result.setErrorCode(Errors.TOPIC_DELETION_DISABLED.code())
                        .setErrorMessage(Errors.TOPIC_DELETION_DISABLED.message());
            } else if (topic.isEmpty()) {
                Errors error = target.name() != null ? Errors.UNKNOWN_TOPIC_OR_PARTITION : Errors.UNKNOWN_TOPIC_ID;
                result.setErrorCode(error.code()).setErrorMessage(error.message());
            } else if (!deleted.contains(topic.get().id())
                    && !quota.record(topic.get().partitions().size())) {
                result.setName(topic.get().name()).setTopicId(topic.get().id())
                        .setErrorCode(Errors.THROTTLING_QUOTA_EXCEEDED.code())
                        .setErrorMessage(Errors.THROTTLING_QUOTA_EXCEEDED.message());
            } else {
                result.setName(topic.get().name()).setTopicId(topic.get().id());
                if (deleted.add(topic.get().id())) {
                    records.add(new RemoveTopicRecord().setTopicId(topic.get().id()));
                }
            }
        }
        return new ControllerResult<>(records, response);
    }

    ControllerResult<CreatePartitionsResponseData> createPartitions(MetadataImage image,
                                                                    CreatePartitionsRequestData request) {
        return createPartitions(image, request, MutationQuota.UNBOUNDED);
    }

    /**
     * CreatePartitions with each topic's new partitions counted against {@code quota}, after the checks of the count
     * and of the number of assignments and before those of the replicas, as Kafka's controller orders them.
     */
    ControllerResult<CreatePartitionsResponseData> createPartitions(MetadataImage image,
            CreatePartitionsRequestData request, MutationQuota quota) {
        CreatePartitionsResponseData response = new CreatePartitionsResponseData();
        List<ApiMessage> records = new ArrayList<>();
        MetadataImage working = image;
        int planned = 0;
        for (CreatePartitionsRequestData.CreatePartitionsTopic target : request.topics()) {
            CreatePartitionsResponseData.CreatePartitionsTopicResult result =
                    new CreatePartitionsResponseData.CreatePartitionsTopicResult().setName(target.name());
            response.results().add(result);
            List<ApiMessage> topicRecords;
            try {
                topicRecords = createPartitions(working, target, result, quota);
            } catch (TooLarge e) {
                return ControllerResult.of(tooLarge(request));
            }
            planned += topicRecords.size();
            if (planned > ControllerLogic.MAX_RECORDS_PER_USER_OP) {
                return ControllerResult.of(tooLarge(request));
            }
            if (!request.validateOnly() && !topicRecords.isEmpty()) {
                records.addAll(topicRecords);
                working = ControllerLogic.apply(working, topicRecords);
            }
        }
        return new ControllerResult<>(records, response);
    }

    private List<ApiMessage> createPartitions(MetadataImage image, CreatePartitionsRequestData.CreatePartitionsTopic
            target, CreatePartitionsResponseData.CreatePartitionsTopicResult result, MutationQuota quota) {
        Optional<TopicImage> topic = image.topic(target.name());
        if (topic.isEmpty()) {
            result.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code())
                    .setErrorMessage(Errors.UNKNOWN_TOPIC_OR_PARTITION.message());
            return List.of();
        }
        int current = topic.get().partitions().size();
        String problem = null;
        Errors error = Errors.INVALID_PARTITIONS;
        if (target.count() < current) {
            problem = "The topic " + target.name() + " currently has " + current + " partition(s); "
                    + target.count() + " would not be an increase.";
        } else if (target.count() == current) {
            problem = "Topic already has " + current + " partition(s).";
        } else if (target.assignments() != null && target.assignments().size() != target.count() - current) {
            error = Errors.INVALID_REPLICA_ASSIGNMENT;
            problem = "Attempted to add " + (target.count() - current) + " additional partition(s), but only "
                    + target.assignments().size() + " assignment(s) were specified.";
        }
        if (problem == null && !quota.record(target.count() - current)) {
            error = Errors.THROTTLING_QUOTA_EXCEEDED;
            problem = Errors.THROTTLING_QUOTA_EXCEEDED.message();
        }
        int replication = topic.get().replicationFactor();
        for (int i = 0; problem == null && target.assignments() != null && i < target.assignments().size(); i++) {
            Optional<String> invalid = checkReplicas(image, target.assignments().get(i).brokerIds(),
                    OptionalInt.of(replication), current + i);
            if (invalid.isPresent()) {
                error = Errors.INVALID_REPLICA_ASSIGNMENT;
                problem = invalid.get();
            }
        }
        List<BrokerRegistration> candidates = placementCandidates(image);
        if (problem == null && target.assignments() == null) {
            Optional<String> refused = ReplicaPlacer.check(candidates, replication);
            if (refused.isPresent()) {
                error = Errors.INVALID_REPLICATION_FACTOR;
                problem = refused.get();
            }
        }
        if (problem != null) {
            result.setErrorCode(error.code()).setErrorMessage(problem);
            return List.of();
        }
        if ((long) target.count() - current > ControllerLogic.MAX_RECORDS_PER_USER_OP) {
            throw new TooLarge();
        }
        List<List<Integer>> assignment = new ArrayList<>();
        if (target.assignments() != null) {
            target.assignments().forEach(a -> assignment.add(List.copyOf(a.brokerIds())));
        } else {
            assignment.addAll(ReplicaPlacer.place(candidates, current, target.count() - current, replication,
                    image.partitionCount()));
            if (assignment.stream().anyMatch(replicas -> initialIsr(image, replicas).isEmpty())) {
                result.setErrorCode(Errors.INVALID_REPLICATION_FACTOR.code())
                        .setErrorMessage(noActiveReplica(replication));
                return List.of();
            }
        }
        List<ApiMessage> records = new ArrayList<>();
        for (int i = 0; i < assignment.size(); i++) {
            records.add(newPartition(image, topic.get().id(), current + i, assignment.get(i)));
        }
        return records;
    }

    /**
     * The brokers new replicas may go to, as Kafka's controller offers them to its placer: every registered broker
     * not in controlled shutdown, fenced ones included (the placer takes a rack's unfenced brokers first and never
     * makes a fenced one leader).
     */
    private static List<BrokerRegistration> placementCandidates(MetadataImage image) {
        return image.brokers().values().stream().filter(b -> !b.inControlledShutdown())
                .sorted(Comparator.comparingInt(BrokerRegistration::id)).toList();
    }

    private static List<ApiMessage> fail(CreateTopicsResponseData.CreatableTopicResult result, Errors error,
                                         String message) {
        result.setErrorCode(error.code()).setErrorMessage(message);
        return List.of();
    }

    /** A new topic id from the generator, never ZERO, ONE or one in use. */
    private Uuid topicId(Set<Uuid> inUse) {
        while (true) {
            Uuid id = topicIds.get();
            if (!id.equals(Uuid.ZERO) && !id.equals(Uuid.ONE) && !inUse.contains(id)) {
                return id;
            }
        }
    }

    /** Random topic ids, as Kafka's controller assigns them. */
    static Uuid randomTopicId() {
        UUID uuid = UUID.randomUUID();
        return new Uuid(uuid.getMostSignificantBits(), uuid.getLeastSignificantBits());
    }
}
