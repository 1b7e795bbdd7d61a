package io.cairn.metadata.controller;

import io.cairn.metadata.image.BrokerRegistration;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicImage;
import io.cairn.metadata.record.PartitionChangeRecord;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ElectLeadersRequestData;
import io.cairn.wire.message.ElectLeadersResponseData;
import io.cairn.wire.message.ElectLeadersResponseData.PartitionResult;
import io.cairn.wire.message.ElectLeadersResponseData.ReplicaElectionResult;
import io.cairn.wire.protocol.ApiMessage;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.IntPredicate;

/**
 * Leader elections asked for by an operator or by the controller itself: ElectLeaders (PREFERRED and UNCLEAN, every
 * partition when the request names none), the periodic move of leadership back to preferred replicas
 * ({@code auto.leader.rebalance.enable}) and the periodic unclean election of leaderless partitions, as Kafka's
 * {@code ReplicationControlManager} decides them. Pure functions of the image; stateless, thread-safe.
 */
final class LeaderCommands {

    /** Kafka's {@code MAX_ELECTIONS_PER_IMBALANCE}: elections per balancing pass. */
    static final int MAX_ELECTIONS_PER_IMBALANCE = 1000;

    private static final byte PREFERRED = 0;
    private static final byte UNCLEAN = 1;

    private LeaderCommands() {
    }

    static IntPredicate usable(MetadataImage image) {
        return id -> image.broker(id).map(BrokerRegistration::usable).orElse(false);
    }

    /**
     * ElectLeaders. An unknown election type fails the whole request with INVALID_REQUEST (Kafka throws
     * InvalidRequestException); with {@code topicPartitions} null, partitions that need no election are left out.
     */
    static ControllerResult<ElectLeadersResponseData> electLeaders(ControllerLogic logic, MetadataImage image,
                                                                   ElectLeadersRequestData request) {
        ElectLeadersResponseData response = new ElectLeadersResponseData();
        byte type = request.electionType();
        if (type != PREFERRED && type != UNCLEAN) {
            return ControllerResult.of(response.setErrorCode(Errors.INVALID_REQUEST.code()));
        }
        List<ApiMessage> records = new ArrayList<>();
        if (request.topicPartitions() == null) {
            image.topicsById().values().stream().sorted(Comparator.comparing(TopicImage::name)).forEach(topic -> {
                ReplicaElectionResult topicResult = new ReplicaElectionResult().setTopic(topic.name());
                response.replicaElectionResults().add(topicResult);
                topic.partitions().keySet().stream().sorted().forEach(index -> {
                    PartitionResult result = electLeader(logic, image, topic.name(), index, type, records);
                    if (result.errorCode() != Errors.ELECTION_NOT_NEEDED.code()) {
                        topicResult.partitionResult().add(result);
                    }
                });
            });
        } else {
            for (ElectLeadersRequestData.TopicPartitions topic : request.topicPartitions()) {
                ReplicaElectionResult topicResult = new ReplicaElectionResult().setTopic(topic.topic());
                response.replicaElectionResults().add(topicResult);
                for (int index : topic.partitions()) {
                    topicResult.partitionResult().add(electLeader(logic, image, topic.topic(), index, type, records));
                }
            }
        }
        if (records.size() > ControllerLogic.MAX_RECORDS_PER_USER_OP) {
            return ControllerResult.of(tooLarge(request));
        }
        return new ControllerResult<>(records, response);
    }

    /** Kafka's answer to an operation of more than 10000 records: POLICY_VIOLATION for the whole request. */
    private static ElectLeadersResponseData tooLarge(ElectLeadersRequestData request) {
        ElectLeadersResponseData response = new ElectLeadersResponseData()
                .setErrorCode(Errors.POLICY_VIOLATION.code());
        if (request.topicPartitions() != null) {
            for (ElectLeadersRequestData.TopicPartitions topic : request.topicPartitions()) {
                ReplicaElectionResult result = new ReplicaElectionResult().setTopic(topic.topic());
                topic.partitions().forEach(index -> result.partitionResult().add(new PartitionResult()
                        .setPartitionId(index).setErrorCode(Errors.POLICY_VIOLATION.code())
                        .setErrorMessage(ControllerLogic.TOO_LARGE)));
                response.replicaElectionResults().add(result);
            }
        }
        return response;
    }

    private static PartitionResult electLeader(ControllerLogic logic, MetadataImage image, String topicName,
                                               int index, byte type, List<ApiMessage> records) {
        PartitionResult result = new PartitionResult().setPartitionId(index);
        Optional<TopicImage> topic = image.topic(topicName);
        if (topic.isEmpty()) {
            return fail(result, Errors.UNKNOWN_TOPIC_OR_PARTITION, "No such topic as " + topicName);
        }
        Optional<PartitionRegistration> partition = topic.get().partition(index);
        if (partition.isEmpty()) {
            return fail(result, Errors.UNKNOWN_TOPIC_OR_PARTITION, "No such partition as " + topicName + "-" + index);
        }
        PartitionRegistration p = partition.get();
        if (type == PREFERRED && p.leader() == p.preferredLeader() || type == UNCLEAN && p.hasLeader()) {
            return fail(result, Errors.ELECTION_NOT_NEEDED, Errors.ELECTION_NOT_NEEDED.message());
        }
        Optional<PartitionChangeRecord> change = logic.withElr(new PartitionChange(topic.get().id(), index, p,
                usable(image)), image, topic.get())
                .election(type == PREFERRED ? PartitionChange.Election.PREFERRED : PartitionChange.Election.UNCLEAN)
                .build();
        if (change.isEmpty()) {
            Errors error = type == PREFERRED ? Errors.PREFERRED_LEADER_NOT_AVAILABLE
                    : Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE;
            return fail(result, error, error.message());
        }
        records.add(change.get());
        return result.setErrorCode(Errors.NONE.code()).setErrorMessage(null);
    }

    private static PartitionResult fail(PartitionResult result, Errors error, String message) {
        return result.setErrorCode(error.code()).setErrorMessage(message);
    }

    /** Whether some partition's leader is not its preferred replica (Kafka's {@code imbalancedPartitions}). */
    static boolean imbalanced(MetadataImage image) {
        for (TopicImage topic : image.topicsById().values()) {
            for (PartitionRegistration p : topic.partitions().values()) {
                if (p.leader() != p.preferredLeader()) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * One pass of Kafka's periodic unclean election ({@code maybeElectUncleanLeaders}): for every leaderless partition
     * of a topic that allows unclean election ({@link ControllerLogic#uncleanElection}: the topic's config, else the
     * controller's or the cluster default's dynamic broker config, else {@code server.properties}), a leader from the
     * ISR or else any usable replica, at most {@code maxElections} of them, in topic-name and partition order.
     */
    static List<ApiMessage> electUncleanLeaders(ControllerLogic logic, MetadataImage image, int maxElections) {
        IntPredicate usable = usable(image);
        List<ApiMessage> records = new ArrayList<>();
        for (TopicImage topic : image.topicsById().values().stream().sorted(Comparator.comparing(TopicImage::name))
                .toList()) {
            if (!logic.uncleanElection(image, topic)) {
                continue;
            }
            for (Map.Entry<Integer, PartitionRegistration> e : topic.partitions().entrySet().stream()
                    .sorted(Map.Entry.comparingByKey()).toList()) {
                if (records.size() >= maxElections) {
                    return records;
                }
                if (!e.getValue().hasLeader()) {
                    logic.withElr(new PartitionChange(topic.id(), e.getKey(), e.getValue(), usable), image, topic)
                            .election(PartitionChange.Election.UNCLEAN).build().ifPresent(records::add);
                }
            }
        }
        return records;
    }

    /**
     * One balancing pass: a preferred-replica election for every partition led by another replica (or by none)
     * whose preferred replica is in the ISR and usable, at most {@code maxElections} of them, in topic-name and
     * partition order.
     */
    static List<ApiMessage> balanceLeaders(ControllerLogic logic, MetadataImage image, int maxElections) {
        IntPredicate usable = usable(image);
        List<ApiMessage> records = new ArrayList<>();
        for (TopicImage topic : image.topicsById().values().stream().sorted(Comparator.comparing(TopicImage::name))
                .toList()) {
            for (Map.Entry<Integer, PartitionRegistration> e : topic.partitions().entrySet().stream()
                    .sorted(Map.Entry.comparingByKey()).toList()) {
                if (records.size() >= maxElections) {
                    return records;
                }
                PartitionRegistration p = e.getValue();
                if (p.leader() != p.preferredLeader()) {
                    logic.withElr(new PartitionChange(topic.id(), e.getKey(), p, usable), image, topic)
                            .election(PartitionChange.Election.PREFERRED).build().ifPresent(records::add);
                }
            }
        }
        return records;
    }
}
