package io.cairn.metadata.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.TestRequests;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicImage;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AlterPartitionRequestData;
import io.cairn.wire.message.AlterPartitionResponseData;
import io.cairn.wire.message.BrokerRegistrationResponseData;
import io.cairn.wire.message.CreateTopicsRequestData;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Kafka's AlterPartition rules on the controller, one test per rule, on a topic [1, 2, 3] led by broker 1. */
class AlterPartitionCommandsTest {

    private final ControllerLogic logic = new ControllerLogic(ControllerSettings.defaults(0));
    private MetadataImage image = MetadataImage.EMPTY;
    private TopicImage topic;

    @BeforeEach
    void threeBrokersAndATopicOnAllOfThem() {
        for (int id = 1; id <= 3; id++) {
            BrokerRegistrationResponseData registered = run(logic.registerBroker(image,
                    TestRequests.registration(id, null), b -> false));
            run(logic.heartbeat(image, TestRequests.heartbeat(id, registered.brokerEpoch())));
        }
        CreateTopicsRequestData create = TestRequests.createTopic("t", -1, -1, Map.of());
        create.topics().get(0).assignments().add(new CreateTopicsRequestData.CreatableReplicaAssignment()
                .setPartitionIndex(0).setBrokerIds(new ArrayList<>(List.of(1, 2, 3))));
        image = ControllerLogic.apply(image, logic.handle(image, create, b -> true).records());
        topic = image.topic("t").orElseThrow();
    }

    private <R extends ApiMessage> R run(ControllerResult<R> result) {
        image = ControllerLogic.apply(image, result.records());
        return result.response();
    }

    private PartitionRegistration partition() {
        return image.topic("t").orElseThrow().partitions().get(0);
    }

    private long epochOf(int broker) {
        return image.broker(broker).orElseThrow().epoch();
    }

    private AlterPartitionResponseData alter(int broker, int leaderEpoch, int partitionEpoch, List<Integer> isr) {
        List<AlterPartitionRequestData.BrokerState> states = new ArrayList<>();
        isr.forEach(b -> states.add(new AlterPartitionRequestData.BrokerState().setBrokerId(b)
                .setBrokerEpoch(epochOf(b))));
        return alterWith(broker, epochOf(broker), leaderEpoch, partitionEpoch, states);
    }

    private AlterPartitionResponseData alterWith(int broker, long brokerEpoch, int leaderEpoch, int partitionEpoch,
                                                 List<AlterPartitionRequestData.BrokerState> isr) {
        List<AlterPartitionRequestData.PartitionData> partitions = new ArrayList<>();
        partitions.add(new AlterPartitionRequestData.PartitionData().setPartitionIndex(0).setLeaderEpoch(leaderEpoch)
                .setPartitionEpoch(partitionEpoch).setNewIsrWithEpochs(isr));
        List<AlterPartitionRequestData.TopicData> topics = new ArrayList<>();
        topics.add(new AlterPartitionRequestData.TopicData().setTopicId(topic.id()).setPartitions(partitions));
        return send(new AlterPartitionRequestData().setBrokerId(broker).setBrokerEpoch(brokerEpoch)
                .setTopics(topics));
    }

    private Errors partitionError(AlterPartitionResponseData response) {
        return Errors.forCode(response.topics().get(0).partitions().get(0).errorCode());
    }

    @Test
    void aShrinkByTheLeaderCommitsTheNewIsrWithTheNextPartitionEpochAndTheSameLeaderEpoch() {
        // Given
        PartitionRegistration before = partition();

        // When
        AlterPartitionResponseData response = alter(1, before.leaderEpoch(), before.partitionEpoch(), List.of(1, 2));

        // Then
        AlterPartitionResponseData.PartitionData result = response.topics().get(0).partitions().get(0);
        assertThat(result.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(result.isr()).containsExactly(1, 2);
        assertThat(result.leaderId()).isEqualTo(1);
        assertThat(result.leaderEpoch()).isEqualTo(before.leaderEpoch());
        assertThat(result.partitionEpoch()).isEqualTo(before.partitionEpoch() + 1);
        assertThat(response.topics().get(0).topicId()).isEqualTo(topic.id());
        assertThat(partition().isr()).containsExactly(1, 2);
        assertThat(partition().leaderEpoch()).isEqualTo(before.leaderEpoch());
    }

    @Test
    void anUnchangedIsrIsAnsweredWithTheCurrentStateAndNoRecord() {
        // Given
        PartitionRegistration before = partition();

        // When
        AlterPartitionResponseData response = alter(1, before.leaderEpoch(), before.partitionEpoch(),
                List.of(1, 2, 3));

        // Then
        assertThat(partitionError(response)).isEqualTo(Errors.NONE);
        assertThat(response.topics().get(0).partitions().get(0).partitionEpoch()).isEqualTo(before.partitionEpoch());
        assertThat(partition()).isEqualTo(before);
    }

    @Test
    void aStaleOrUnknownRequesterEpochIsATopLevelStaleBrokerEpoch() {
        // Given
        PartitionRegistration p = partition();

        // When
        AlterPartitionResponseData stale = alterWith(1, epochOf(1) + 1, p.leaderEpoch(), p.partitionEpoch(),
                List.of());
        AlterPartitionResponseData unknown = alterWith(9, 0, p.leaderEpoch(), p.partitionEpoch(), List.of());

        // Then
        assertThat(stale.errorCode()).isEqualTo(Errors.STALE_BROKER_EPOCH.code());
        assertThat(unknown.errorCode()).isEqualTo(Errors.STALE_BROKER_EPOCH.code());
        assertThat(stale.topics()).isEmpty();
    }

    @Test
    void epochsNewerThanTheControllersAreNotController() {
        // Given
        PartitionRegistration p = partition();

        // When
        AlterPartitionResponseData newerLeaderEpoch = alter(1, p.leaderEpoch() + 1, p.partitionEpoch(), List.of(1));
        AlterPartitionResponseData newerPartitionEpoch = alter(1, p.leaderEpoch(), p.partitionEpoch() + 1,
                List.of(1));

        // Then
        assertThat(partitionError(newerLeaderEpoch)).isEqualTo(Errors.NOT_CONTROLLER);
        assertThat(partitionError(newerPartitionEpoch)).isEqualTo(Errors.NOT_CONTROLLER);
        assertThat(partition()).isEqualTo(p);
    }

    @Test
    void anOlderLeaderEpochIsFencedAndAnOlderPartitionEpochIsAnInvalidUpdateVersion() {
        // Given a shrink committed, so the partition epoch moved on
        PartitionRegistration p = partition();
        alter(1, p.leaderEpoch(), p.partitionEpoch(), List.of(1, 2));
        PartitionRegistration shrunk = partition();

        // When
        AlterPartitionResponseData staleVersion = alter(1, shrunk.leaderEpoch(), p.partitionEpoch(), List.of(1));
        AlterPartitionResponseData fenced = alter(1, shrunk.leaderEpoch() - 1, shrunk.partitionEpoch(), List.of(1));

        // Then
        assertThat(partitionError(staleVersion)).isEqualTo(Errors.INVALID_UPDATE_VERSION);
        assertThat(partitionError(fenced)).isEqualTo(Errors.FENCED_LEADER_EPOCH);
        assertThat(partition()).isEqualTo(shrunk);
    }

    @Test
    void aRequesterThatDoesNotLeadOrAnIsrWithoutTheLeaderOrOutsideTheReplicasIsInvalid() {
        // Given
        PartitionRegistration p = partition();

        // When
        AlterPartitionResponseData notLeader = alter(2, p.leaderEpoch(), p.partitionEpoch(), List.of(2));
        AlterPartitionResponseData withoutLeader = alter(1, p.leaderEpoch(), p.partitionEpoch(), List.of(2, 3));
        AlterPartitionResponseData duplicate = alter(1, p.leaderEpoch(), p.partitionEpoch(), List.of(1, 2, 2));
        AlterPartitionResponseData empty = alterWith(1, epochOf(1), p.leaderEpoch(), p.partitionEpoch(), List.of());

        // Then
        assertThat(partitionError(notLeader)).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(partitionError(withoutLeader)).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(partitionError(duplicate)).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(partitionError(empty)).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(partition()).isEqualTo(p);
    }

    @Test
    void aFencedShuttingDownOrOtherEpochMemberIsAnIneligibleReplica() {
        // Given the ISR shrunk to [1], then broker 2 fenced and broker 3 in controlled shutdown
        PartitionRegistration p = partition();
        alter(1, p.leaderEpoch(), p.partitionEpoch(), List.of(1));
        long epoch3 = epochOf(3);
        image = ControllerLogic.apply(image, logic.fenceExpired(image, 2));
        run(logic.heartbeat(image, TestRequests.heartbeat(3, epoch3).setWantShutDown(true)));
        PartitionRegistration shrunk = partition();

        // When the leader asks to add each of them
        AlterPartitionResponseData fenced = alter(1, shrunk.leaderEpoch(), shrunk.partitionEpoch(), List.of(1, 2));
        AlterPartitionResponseData shuttingDown = alter(1, shrunk.leaderEpoch(), shrunk.partitionEpoch(),
                List.of(1, 3));

        // Then
        assertThat(partitionError(fenced)).isEqualTo(Errors.INELIGIBLE_REPLICA);
        assertThat(partitionError(shuttingDown)).isEqualTo(Errors.INELIGIBLE_REPLICA);
        assertThat(partition()).isEqualTo(shrunk);
    }

    @Test
    void aNewMemberWithAnotherBrokerEpochIsIneligibleAndMinusOneSkipsTheCheck() {
        // Given the ISR shrunk to [1]
        PartitionRegistration p = partition();
        alter(1, p.leaderEpoch(), p.partitionEpoch(), List.of(1));
        PartitionRegistration shrunk = partition();
        List<AlterPartitionRequestData.BrokerState> staleEpoch = List.of(
                new AlterPartitionRequestData.BrokerState().setBrokerId(1).setBrokerEpoch(epochOf(1)),
                new AlterPartitionRequestData.BrokerState().setBrokerId(2).setBrokerEpoch(epochOf(2) - 1));
        List<AlterPartitionRequestData.BrokerState> noEpoch = List.of(
                new AlterPartitionRequestData.BrokerState().setBrokerId(1).setBrokerEpoch(-1),
                new AlterPartitionRequestData.BrokerState().setBrokerId(2).setBrokerEpoch(-1));

        // When
        AlterPartitionResponseData stale = alterWith(1, epochOf(1), shrunk.leaderEpoch(), shrunk.partitionEpoch(),
                staleEpoch);
        AlterPartitionResponseData skipped = alterWith(1, epochOf(1), shrunk.leaderEpoch(), shrunk.partitionEpoch(),
                noEpoch);

        // Then
        assertThat(partitionError(stale)).isEqualTo(Errors.INELIGIBLE_REPLICA);
        assertThat(partitionError(skipped)).isEqualTo(Errors.NONE);
        assertThat(partition().isr()).containsExactly(1, 2);
    }

    @Test
    void aVersionTwoIsrWithoutEpochsIsAccepted() {
        // Given
        PartitionRegistration p = partition();
        List<AlterPartitionRequestData.PartitionData> partitions = new ArrayList<>();
        partitions.add(new AlterPartitionRequestData.PartitionData().setPartitionIndex(0)
                .setLeaderEpoch(p.leaderEpoch()).setPartitionEpoch(p.partitionEpoch())
                .setNewIsr(new ArrayList<>(List.of(1, 3))));
        List<AlterPartitionRequestData.TopicData> topics = new ArrayList<>();
        topics.add(new AlterPartitionRequestData.TopicData().setTopicId(topic.id()).setPartitions(partitions));

        // When
        AlterPartitionResponseData response = send(new AlterPartitionRequestData().setBrokerId(1)
                .setBrokerEpoch(epochOf(1)).setTopics(topics));

        // Then
        assertThat(partitionError(response)).isEqualTo(Errors.NONE);
        assertThat(partition().isr()).containsExactly(1, 3);
    }

    @Test
    void anUnknownTopicIdOrPartitionIsReportedPerPartition() {
        // Given
        PartitionRegistration p = partition();
        List<AlterPartitionRequestData.PartitionData> partitions = new ArrayList<>();
        partitions.add(new AlterPartitionRequestData.PartitionData().setPartitionIndex(7)
                .setLeaderEpoch(p.leaderEpoch()).setPartitionEpoch(p.partitionEpoch()));
        List<AlterPartitionRequestData.TopicData> topics = new ArrayList<>();
        topics.add(new AlterPartitionRequestData.TopicData().setTopicId(topic.id()).setPartitions(partitions));
        topics.add(new AlterPartitionRequestData.TopicData().setTopicId(new Uuid(5, 5))
                .setPartitions(List.of(new AlterPartitionRequestData.PartitionData().setPartitionIndex(0))));

        // When
        AlterPartitionResponseData response = send(new AlterPartitionRequestData().setBrokerId(1)
                .setBrokerEpoch(epochOf(1)).setTopics(topics));

        // Then
        assertThat(response.topics().get(0).partitions().get(0).errorCode())
                .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        assertThat(response.topics().get(1).partitions().get(0).errorCode())
                .isEqualTo(Errors.UNKNOWN_TOPIC_ID.code());
    }

    @SuppressWarnings("unchecked")
    private AlterPartitionResponseData send(AlterPartitionRequestData request) {
        return run((ControllerResult<AlterPartitionResponseData>) logic.handle(image, request, b -> true));
    }
}
