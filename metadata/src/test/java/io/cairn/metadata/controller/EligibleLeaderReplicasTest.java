package io.cairn.metadata.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.TestRequests;
import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.Features;
import io.cairn.metadata.image.ImageRecords;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicImage;
import io.cairn.metadata.record.ClearElrRecord;
import io.cairn.metadata.record.ConfigRecord;
import io.cairn.metadata.record.FeatureLevelRecord;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AlterPartitionRequestData;
import io.cairn.wire.message.BrokerHeartbeatRequestData;
import io.cairn.wire.message.BrokerRegistrationRequestData;
import io.cairn.wire.message.BrokerRegistrationResponseData;
import io.cairn.wire.message.CreateTopicsRequestData;
import io.cairn.wire.message.ElectLeadersRequestData;
import io.cairn.wire.message.ElectLeadersResponseData;
import io.cairn.wire.message.IncrementalAlterConfigsRequestData;
import io.cairn.wire.message.IncrementalAlterConfigsResponseData;
import io.cairn.wire.protocol.ApiMessage;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * KIP-966 eligible leader replicas through {@link ControllerLogic}, on a topic with replicas [1, 2, 3] and
 * {@code min.insync.replicas=2} led by broker 1: clean shutdowns move replicas from the ISR into the ELR once the ISR
 * is below the minimum, the ISR may become empty, an ELR member that comes back is elected, an unclean shutdown takes
 * a broker out of the ELR, no replica outside the ISR and ELR is elected without unclean election, and the ELR is
 * cleared when the ISR is full again or min.insync.replicas changes.
 */
class EligibleLeaderReplicasTest {

    private final ControllerLogic logic = new ControllerLogic(ControllerSettings.defaults(0));
    private final Map<Integer, Long> epochs = new HashMap<>();
    private final Map<Integer, BrokerRegistrationRequestData> registrations = new HashMap<>();
    private MetadataImage image = MetadataImage.EMPTY;

    private <R extends ApiMessage> R run(ControllerResult<R> result) {
        image = ControllerLogic.apply(image, result.records());
        return result.response();
    }

    private void start(boolean elr) {
        if (elr) {
            image = ControllerLogic.apply(image, logic.bootstrapFeatures(image));
        }
        for (int id = 1; id <= 3; id++) {
            register(id, -1L);
        }
        CreateTopicsRequestData create = TestRequests.createTopic("t", 1, 3, Map.of("min.insync.replicas", "2"));
        create.topics().get(0).setReplicationFactor((short) -1).setNumPartitions(-1).assignments()
                .add(new CreateTopicsRequestData.CreatableReplicaAssignment().setPartitionIndex(0)
                        .setBrokerIds(new ArrayList<>(List.of(1, 2, 3))));
        run(logic.handle(image, create, b -> true));
        assertThat(partition()).extracting(PartitionRegistration::leader, PartitionRegistration::isr)
                .containsExactly(1, List.of(1, 2, 3));
    }

    /** (Re-)registers a broker, naming {@code previousBrokerEpoch}, and unfences it with a heartbeat. */
    private void register(int id, long previousBrokerEpoch) {
        BrokerRegistrationRequestData request = registrations.computeIfAbsent(id,
                b -> TestRequests.registration(b, null)).setPreviousBrokerEpoch(previousBrokerEpoch);
        BrokerRegistrationResponseData registered = run(logic.registerBroker(image, request, b -> false));
        epochs.put(id, registered.brokerEpoch());
        run(logic.heartbeat(image, TestRequests.heartbeat(id, registered.brokerEpoch())));
    }

    /** Kafka's clean shutdown: controlled shutdown (its leaderships and ISR memberships leave), then fenced. */
    private void stopCleanly(int id) {
        run(logic.heartbeat(image, new BrokerHeartbeatRequestData().setBrokerId(id).setBrokerEpoch(epochs.get(id))
                .setWantShutDown(true)));
        run(logic.heartbeat(image, new BrokerHeartbeatRequestData().setBrokerId(id).setBrokerEpoch(epochs.get(id))
                .setWantFence(true).setWantShutDown(true)));
    }

    private PartitionRegistration partition() {
        return PartitionImages.partition(image, "t", 0);
    }

    @Test
    void cleanShutdownsFillTheElrAndAnElrMemberComingBackIsElected() {
        // Given
        start(true);

        // When: follower 2 stops; the ISR keeps its minimum
        stopCleanly(2);
        // Then
        assertThat(partition().isr()).containsExactly(1, 3);
        assertThat(partition().elr()).isEmpty();

        // When: follower 3 stops; the ISR falls below the minimum
        stopCleanly(3);
        // Then
        assertThat(partition().isr()).containsExactly(1);
        assertThat(partition().elr()).containsExactly(3);

        // When: the leader stops
        stopCleanly(1);
        // Then: the ISR is empty, the leader joined the ELR and is remembered
        assertThat(partition().leader()).isEqualTo(PartitionRegistration.NO_LEADER);
        assertThat(partition().isr()).isEmpty();
        assertThat(partition().elr()).containsExactly(1, 3);
        assertThat(partition().lastKnownElr()).containsExactly(1);

        // When: 2 (not in the ELR) comes back, then 3 (in the ELR, shut down cleanly)
        register(2, epochs.get(2));
        assertThat(partition().leader()).as("no election from outside the ISR and ELR")
                .isEqualTo(PartitionRegistration.NO_LEADER);
        register(3, epochs.get(3));
        // Then
        assertThat(partition().leader()).isEqualTo(3);
        assertThat(partition().isr()).containsExactly(3);
        assertThat(partition().elr()).containsExactly(1);
        assertThat(partition().lastKnownElr()).isEmpty();
    }

    @Test
    void anUncleanShutdownTakesTheBrokerOutOfTheElr() {
        // Given: 3 and then 1 stopped cleanly, so the ELR is [1, 3] and the ISR empty
        start(true);
        stopCleanly(2);
        stopCleanly(3);
        stopCleanly(1);
        assertThat(partition().elr()).containsExactly(1, 3);

        // When: 3 registers without the epoch of its clean shutdown (it crashed after all)
        register(3, -1L);

        // Then: it is neither elected nor eligible any more; 1 still is
        assertThat(partition().leader()).isEqualTo(PartitionRegistration.NO_LEADER);
        assertThat(partition().elr()).containsExactly(1);

        // When: 1 comes back cleanly
        register(1, epochs.get(1));
        // Then
        assertThat(partition().leader()).isEqualTo(1);
        assertThat(partition().isr()).containsExactly(1);
        assertThat(partition().elr()).isEmpty();
    }

    @Test
    void theLastKnownLeaderIsElectedWhenTheIsrAndElrAreEmpty() {
        // Given: 3 left the ELR by an unclean shutdown while the partition was leaderless; only 1, the last leader,
        // is eligible
        start(true);
        stopCleanly(2);
        stopCleanly(3);
        stopCleanly(1);
        register(3, -1L);
        assertThat(partition().elr()).containsExactly(1);
        assertThat(partition().lastKnownElr()).containsExactly(1);

        // When: 1 registers again after an unclean shutdown too: it leaves the ELR, which is then empty
        register(1, -1L);

        // Then: Kafka 4.1's balanced recovery elects the last known leader, as the sole ISR member, once it is
        // unfenced; 3, which led never, is not chosen
        assertThat(partition().leader()).isEqualTo(1);
        assertThat(partition().isr()).containsExactly(1);
        assertThat(partition().elr()).isEmpty();
        assertThat(partition().lastKnownElr()).isEmpty();
    }

    @Test
    void withoutTheFeatureTheIsrIsNeverEmptiedAndNoElrIsKept() {
        // Given
        start(false);

        // When
        stopCleanly(2);
        stopCleanly(3);
        stopCleanly(1);

        // Then
        assertThat(partition().isr()).containsExactly(1);
        assertThat(partition().elr()).isEmpty();
        assertThat(partition().lastKnownElr()).isEmpty();
        assertThat(partition().leader()).isEqualTo(PartitionRegistration.NO_LEADER);
    }

    @Test
    void alterPartitionShrinkBelowTheMinimumFillsTheElrAndAFullIsrClearsIt() {
        // Given
        start(true);

        // When: the leader shrinks the ISR to itself
        run(logic.alterPartition(image, alterIsr(List.of(1))));
        // Then
        assertThat(partition().isr()).containsExactly(1);
        assertThat(partition().elr()).containsExactly(2, 3);

        // When: 2 catches up; the ISR reaches the minimum
        run(logic.alterPartition(image, alterIsr(List.of(1, 2))));
        // Then
        assertThat(partition().isr()).containsExactly(1, 2);
        assertThat(partition().elr()).isEmpty();
    }

    @Test
    void changingMinInsyncReplicasClearsTheElr() {
        // Given
        start(true);
        run(logic.alterPartition(image, alterIsr(List.of(1))));
        assertThat(partition().elr()).containsExactly(2, 3);

        // When
        IncrementalAlterConfigsRequestData request = new IncrementalAlterConfigsRequestData();
        IncrementalAlterConfigsRequestData.AlterConfigsResource resource =
                new IncrementalAlterConfigsRequestData.AlterConfigsResource().setResourceType((byte) 2)
                        .setResourceName("t");
        resource.configs().add(new IncrementalAlterConfigsRequestData.AlterableConfig()
                .setName("min.insync.replicas").setConfigOperation((byte) 0).setValue("1"));
        request.resources().add(resource);
        ControllerResult<? extends ApiMessage> result = logic.handle(image, request, b -> true);

        // Then
        assertThat(result.records()).anySatisfy(r -> assertThat(r).isEqualTo(new ClearElrRecord().setTopicName("t")));
        run(result);
        assertThat(partition().elr()).isEmpty();
        assertThat(partition().lastKnownElr()).isEmpty();
    }

    private static IncrementalAlterConfigsRequestData brokerMinIsr(String broker, String value) {
        IncrementalAlterConfigsRequestData request = new IncrementalAlterConfigsRequestData();
        IncrementalAlterConfigsRequestData.AlterConfigsResource resource =
                new IncrementalAlterConfigsRequestData.AlterConfigsResource().setResourceType((byte) 4)
                        .setResourceName(broker);
        resource.configs().add(new IncrementalAlterConfigsRequestData.AlterableConfig()
                .setName("min.insync.replicas").setConfigOperation(value == null ? (byte) 1 : (byte) 0)
                .setValue(value));
        request.resources().add(resource);
        return request;
    }

    private IncrementalAlterConfigsResponseData alter(IncrementalAlterConfigsRequestData request) {
        return (IncrementalAlterConfigsResponseData) run(logic.handle(image, request, b -> true));
    }

    @Test
    void theClusterDefaultMinInsyncReplicasClearsEveryElrAndABrokersOwnIsRefused() {
        // Given
        start(true);
        run(logic.alterPartition(image, alterIsr(List.of(1))));
        assertThat(partition().elr()).containsExactly(2, 3);

        // When
        IncrementalAlterConfigsResponseData own = alter(brokerMinIsr("1", "2"));
        ControllerResult<? extends ApiMessage> cluster = logic.handle(image, brokerMinIsr("", "2"), b -> true);

        // Then
        assertThat(own.responses().get(0).errorCode()).isEqualTo(Errors.INVALID_CONFIG.code());
        assertThat(own.responses().get(0).errorMessage())
                .isEqualTo("Broker-level min.insync.replicas cannot be altered while ELR is enabled.");
        assertThat(partition().elr()).containsExactly(2, 3);
        assertThat(cluster.records()).anySatisfy(r -> assertThat(r).isEqualTo(new ClearElrRecord()));
        run(cluster);
        assertThat(partition().elr()).isEmpty();
        assertThat(image.configs(ConfigResource.broker(""))).containsEntry("min.insync.replicas", "2");
        IncrementalAlterConfigsResponseData removed = alter(brokerMinIsr("", null));
        assertThat(removed.responses().get(0).errorMessage())
                .isEqualTo("Cluster-level min.insync.replicas cannot be removed while ELR is enabled.");
        assertThat(image.configs(ConfigResource.broker(""))).containsEntry("min.insync.replicas", "2");
    }

    @Test
    void withoutElrABrokersOwnMinInsyncReplicasIsStored() {
        // Given
        start(false);

        // When
        IncrementalAlterConfigsResponseData own = alter(brokerMinIsr("1", "2"));

        // Then
        assertThat(own.responses().get(0).errorCode()).isZero();
        assertThat(image.configs(ConfigResource.broker("1"))).containsEntry("min.insync.replicas", "2");
    }

    @Test
    void anUncleanElectionOutsideTheElrClearsIt() {
        // Given: ISR empty, ELR [1, 3] (both down); 2, which left the ISR while it was full, is back
        start(true);
        stopCleanly(2);
        stopCleanly(3);
        stopCleanly(1);
        register(2, epochs.get(2));

        // When: an unclean election: 2 is the only usable replica and holds no guarantee
        ElectLeadersRequestData request = new ElectLeadersRequestData().setElectionType((byte) 1)
                .setTopicPartitions(new ArrayList<>(List.of(new ElectLeadersRequestData.TopicPartitions()
                        .setTopic("t").setPartitions(new ArrayList<>(List.of(0))))));
        ControllerResult<? extends ApiMessage> result = logic.handle(image, request, b -> true);
        image = ControllerLogic.apply(image, result.records());
        ElectLeadersResponseData response = (ElectLeadersResponseData) result.response();

        // Then: Kafka's UNCLEAN election elects it as the sole ISR member and clears the ELR
        assertThat(response.replicaElectionResults().get(0).partitionResult().get(0).errorCode()).isZero();
        assertThat(partition().leader()).isEqualTo(2);
        assertThat(partition().isr()).containsExactly(2);
        assertThat(partition().elr()).isEmpty();
        assertThat(partition().lastKnownElr()).isEmpty();
    }

    @Test
    void bootstrapFeaturesAreWrittenOnceAndSurviveASnapshot() {
        // Given
        List<ApiMessage> first = logic.bootstrapFeatures(image);

        // Then: with the cluster-level min.insync.replicas that makes enabling ELR safe, as Kafka's controller
        assertThat(first).containsExactlyInAnyOrder(
                new ConfigRecord().setResourceType(ConfigResource.BROKER).setResourceName("")
                        .setName("min.insync.replicas")
                        .setValue(Integer.toString(logic.settings().minInsyncReplicas())),
                new FeatureLevelRecord().setName(Features.ELIGIBLE_LEADER_REPLICAS_VERSION).setFeatureLevel((short) 1),
                new FeatureLevelRecord().setName(Features.GROUP_VERSION).setFeatureLevel((short) 1),
                new FeatureLevelRecord().setName(Features.METADATA_VERSION).setFeatureLevel((short) 27),
                new FeatureLevelRecord().setName(Features.TRANSACTION_VERSION).setFeatureLevel((short) 2));
        image = ControllerLogic.apply(image, first);
        assertThat(logic.bootstrapFeatures(image)).isEmpty();
        assertThat(Features.elrEnabled(image)).isTrue();
        start(false);
        run(logic.alterPartition(image, alterIsr(List.of(1))));
        MetadataImage rebuilt = ControllerLogic.apply(MetadataImage.EMPTY, ImageRecords.of(image));
        assertThat(rebuilt.features()).isEqualTo(image.features());
        TopicImage topic = rebuilt.topic("t").orElseThrow();
        assertThat(topic.partition(0).orElseThrow().elr()).containsExactly(2, 3);
    }

    private AlterPartitionRequestData alterIsr(List<Integer> isr) {
        PartitionRegistration p = partition();
        AlterPartitionRequestData.PartitionData data = new AlterPartitionRequestData.PartitionData()
                .setPartitionIndex(0).setLeaderEpoch(p.leaderEpoch()).setPartitionEpoch(p.partitionEpoch());
        isr.forEach(id -> data.newIsrWithEpochs().add(new AlterPartitionRequestData.BrokerState().setBrokerId(id)
                .setBrokerEpoch(epochs.get(id))));
        AlterPartitionRequestData.TopicData topic = new AlterPartitionRequestData.TopicData()
                .setTopicId(image.topic("t").orElseThrow().id());
        topic.partitions().add(data);
        AlterPartitionRequestData request = new AlterPartitionRequestData().setBrokerId(1)
                .setBrokerEpoch(epochs.get(1));
        request.topics().add(topic);
        return request;
    }
}
