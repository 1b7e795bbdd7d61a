package io.cairn.metadata.controller;

import io.cairn.metadata.image.BrokerRegistration;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicImage;
import io.cairn.metadata.record.PartitionChangeRecord;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AlterPartitionRequestData;
import io.cairn.wire.message.AlterPartitionResponseData;
import io.cairn.wire.protocol.ApiMessage;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The controller's side of AlterPartition (KIP-497): a partition leader asks to change its ISR. The checks and their
 * order are those of Kafka's {@code ReplicationControlManager.alterPartition}: the requesting broker's epoch
 * (top-level STALE_BROKER_EPOCH), an unknown topic id or partition, epochs newer than the controller's
 * (NOT_CONTROLLER: this controller may be stale), an older leader epoch (FENCED_LEADER_EPOCH), a requester that is
 * not the leader (INVALID_REQUEST), an older partition epoch (INVALID_UPDATE_VERSION), an ISR that is not a subset of
 * the replicas or omits the leader (INVALID_REQUEST), and a member that is not registered, fenced, in controlled
 * shutdown or of another broker epoch (INELIGIBLE_REPLICA, KIP-841 and KIP-903). An accepted ISR becomes a
 * {@link PartitionChangeRecord} (no leader epoch bump, as Kafka since 3.6); an unchanged one is answered with the
 * current state and no record. Cairn has no reassignments, so the change never moves the leadership and
 * NEW_LEADER_ELECTED does not arise here. Stateless, thread-safe.
 */
final class AlterPartitionCommands {

    private static final Logger LOGGER = LogManager.getLogger(AlterPartitionCommands.class);

    private AlterPartitionCommands() {
    }

    static ControllerResult<AlterPartitionResponseData> alterPartition(ControllerLogic logic, MetadataImage image,
                                                                       AlterPartitionRequestData request) {
        AlterPartitionResponseData response = new AlterPartitionResponseData();
        Optional<BrokerRegistration> requester = image.broker(request.brokerId());
        if (requester.isEmpty() || requester.get().epoch() != request.brokerEpoch()) {
            return ControllerResult.of(response.setErrorCode(Errors.STALE_BROKER_EPOCH.code()));
        }
        List<ApiMessage> records = new ArrayList<>();
        for (AlterPartitionRequestData.TopicData topicData : request.topics()) {
            AlterPartitionResponseData.TopicData topicResult = new AlterPartitionResponseData.TopicData()
                    .setTopicId(topicData.topicId());
            response.topics().add(topicResult);
            Optional<TopicImage> topic = image.topic(topicData.topicId());
            if (topic.isEmpty()) {
                LOGGER.info("Rejecting AlterPartition request for unknown topic ID {}.", topicData.topicId());
            }
            for (AlterPartitionRequestData.PartitionData data : topicData.partitions()) {
                AlterPartitionResponseData.PartitionData result = new AlterPartitionResponseData.PartitionData()
                        .setPartitionIndex(data.partitionIndex());
                topicResult.partitions().add(result);
                if (topic.isEmpty()) {
                    result.setErrorCode(Errors.UNKNOWN_TOPIC_ID.code());
                    continue;
                }
                alterOne(logic, image, request.brokerId(), topic.get(), data, result).ifPresent(records::add);
            }
        }
        return new ControllerResult<>(records, response);
    }

    private static Optional<PartitionChangeRecord> alterOne(ControllerLogic logic, MetadataImage image, int brokerId,
            TopicImage topic, AlterPartitionRequestData.PartitionData data,
            AlterPartitionResponseData.PartitionData result) {
        Optional<PartitionRegistration> found = topic.partition(data.partitionIndex());
        List<AlterPartitionRequestData.BrokerState> newIsr = newIsrWithEpochs(data);
        Errors error = found.isEmpty() ? Errors.UNKNOWN_TOPIC_OR_PARTITION
                : validate(image, brokerId, topic.name(), found.get(), data, newIsr);
        if (error != Errors.NONE) {
            result.setErrorCode(error.code());
            return Optional.empty();
        }
        PartitionRegistration p = found.get();
        List<Integer> targetIsr = new ArrayList<>();
        newIsr.forEach(state -> targetIsr.add(state.brokerId()));
        // The leader is a member of the validated ISR and usable, so the change keeps it and only moves members
        // between the ISR and the eligible leader replicas. A reassignment is completed afterwards, by
        // ControllerLogic.alterPartition, so it is left out here.
        PartitionRegistration withoutReassignment = new PartitionRegistration(p.replicas(), p.isr(), p.leader(),
                p.leaderEpoch(), p.partitionEpoch(), List.of(), List.of(), p.elr(), p.lastKnownElr());
        Optional<PartitionChangeRecord> change = logic.withElr(new PartitionChange(topic.id(), data.partitionIndex(),
                withoutReassignment, LeaderCommands.usable(image)), image, topic).isr(targetIsr).build();
        int partitionEpoch = p.partitionEpoch();
        if (change.isPresent()) {
            partitionEpoch++;
            LOGGER.debug("Node {} has altered ISR for {}-{} to {}.", brokerId, topic.name(), data.partitionIndex(),
                    targetIsr);
        }
        result.setErrorCode(Errors.NONE.code()).setLeaderId(p.leader()).setLeaderEpoch(p.leaderEpoch())
                .setIsr(List.copyOf(targetIsr)).setLeaderRecoveryState((byte) 0)
                .setPartitionEpoch(partitionEpoch);
        return change;
    }

    /** A version 2 request names the ISR without broker epochs: each member then skips the epoch check (-1). */
    private static List<AlterPartitionRequestData.BrokerState> newIsrWithEpochs(
            AlterPartitionRequestData.PartitionData data) {
        if (!data.newIsrWithEpochs().isEmpty() || data.newIsr() == null || data.newIsr().isEmpty()) {
            return data.newIsrWithEpochs();
        }
        List<AlterPartitionRequestData.BrokerState> states = new ArrayList<>();
        data.newIsr().forEach(id -> states.add(new AlterPartitionRequestData.BrokerState().setBrokerId(id)
                .setBrokerEpoch(-1L)));
        return states;
    }

    private static Errors validate(MetadataImage image, int brokerId, String topic, PartitionRegistration p,
                                   AlterPartitionRequestData.PartitionData data,
                                   List<AlterPartitionRequestData.BrokerState> newIsr) {
        int index = data.partitionIndex();
        if (data.leaderEpoch() > p.leaderEpoch() || data.partitionEpoch() > p.partitionEpoch()) {
            LOGGER.debug("Rejecting AlterPartition request from node {} for {}-{} because its leader epoch {} or "
                    + "partition epoch {} is newer than the local {} and {}.", brokerId, topic, index,
                    data.leaderEpoch(), data.partitionEpoch(), p.leaderEpoch(), p.partitionEpoch());
            return Errors.NOT_CONTROLLER;
        }
        if (data.leaderEpoch() < p.leaderEpoch()) {
            LOGGER.debug("Rejecting AlterPartition request from node {} for {}-{} because the current leader epoch "
                    + "is {}, not {}.", brokerId, topic, index, p.leaderEpoch(), data.leaderEpoch());
            return Errors.FENCED_LEADER_EPOCH;
        }
        if (brokerId != p.leader()) {
            LOGGER.info("Rejecting AlterPartition request from node {} for {}-{} because the current leader is {}.",
                    brokerId, topic, index, p.leader());
            return Errors.INVALID_REQUEST;
        }
        if (data.partitionEpoch() < p.partitionEpoch()) {
            LOGGER.info("Rejecting AlterPartition request from node {} for {}-{} because the current partition "
                    + "epoch is {}, not {}.", brokerId, topic, index, p.partitionEpoch(), data.partitionEpoch());
            return Errors.INVALID_UPDATE_VERSION;
        }
        Set<Integer> members = new HashSet<>();
        for (AlterPartitionRequestData.BrokerState state : newIsr) {
            if (!members.add(state.brokerId()) || !p.replicas().contains(state.brokerId())) {
                LOGGER.error("Rejecting AlterPartition request from node {} for {}-{} because it specified an "
                        + "invalid ISR {}.", brokerId, topic, index, ids(newIsr));
                return Errors.INVALID_REQUEST;
            }
        }
        if (!members.contains(p.leader())) {
            LOGGER.error("Rejecting AlterPartition request from node {} for {}-{} because it specified an invalid "
                    + "ISR {} that doesn't include itself.", brokerId, topic, index, ids(newIsr));
            return Errors.INVALID_REQUEST;
        }
        if (data.leaderRecoveryState() != 0) {
            LOGGER.info("Rejecting AlterPartition request from node {} for {}-{} because the leader recovery state "
                    + "cannot change from RECOVERED to RECOVERING.", brokerId, topic, index);
            return Errors.INVALID_REQUEST;
        }
        List<String> ineligible = ineligibleReplicas(image, newIsr);
        if (!ineligible.isEmpty()) {
            LOGGER.info("Rejecting AlterPartition request from node {} for {}-{} because it specified ineligible "
                    + "replicas {} in the new ISR {}.", brokerId, topic, index, ineligible, ids(newIsr));
            return Errors.INELIGIBLE_REPLICA;
        }
        return Errors.NONE;
    }

    /** The members that may not be in an ISR, each with the reason (Kafka's {@code ineligibleReplicasForIsr}). */
    static List<String> ineligibleReplicas(MetadataImage image, List<AlterPartitionRequestData.BrokerState> isr) {
        List<String> ineligible = new ArrayList<>(0);
        for (AlterPartitionRequestData.BrokerState state : isr) {
            Optional<BrokerRegistration> broker = image.broker(state.brokerId());
            String reason = null;
            if (broker.isEmpty()) {
                reason = "not registered";
            } else if (broker.get().inControlledShutdown()) {
                reason = "shutting down";
            } else if (broker.get().fenced()) {
                reason = "fenced";
            } else if (state.brokerEpoch() != -1 && broker.get().epoch() != state.brokerEpoch()) {
                reason = "broker epoch mismatch: requested=" + state.brokerEpoch() + " VS expected="
                        + broker.get().epoch();
            }
            if (reason != null) {
                ineligible.add("(brokerId=" + state.brokerId() + ", reason=" + reason + ")");
            }
        }
        return ineligible;
    }

    private static List<Integer> ids(List<AlterPartitionRequestData.BrokerState> isr) {
        List<Integer> ids = new ArrayList<>(isr.size());
        isr.forEach(state -> ids.add(state.brokerId()));
        return ids;
    }
}
