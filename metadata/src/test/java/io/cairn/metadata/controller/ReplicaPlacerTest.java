package io.cairn.metadata.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.metadata.TestRequests;
import io.cairn.metadata.image.BrokerRegistration;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.BrokerRegistrationResponseData;
import io.cairn.wire.message.CreatePartitionsRequestData;
import io.cairn.wire.message.CreatePartitionsResponseData;
import io.cairn.wire.message.CreateTopicsResponseData;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.Uuid;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@link ReplicaPlacer} alone (Kafka's {@code StripedReplicaPlacer} rules: racks striped, fenced brokers only when
 * needed and never leader, its refusals) and through the controller's CreateTopics and CreatePartitions (the ISR
 * of the unfenced replicas, Kafka's messages).
 */
class ReplicaPlacerTest {

    private final ControllerLogic logic = new ControllerLogic(ControllerSettings.defaults(0));

    private MetadataImage image = MetadataImage.EMPTY;

    @Test
    void fencedBrokersHoldReplicasOnlyWhenTheUnfencedAreTooFewAndNeverLead() {
        // Given brokers 1 and 2 unfenced, 3 and 4 fenced, no racks
        List<BrokerRegistration> brokers = List.of(broker(1, null, false), broker(2, null, false),
                broker(3, null, true), broker(4, null, true));

        // When
        List<List<Integer>> rf2 = ReplicaPlacer.place(brokers, 0, 20, 2, 7);
        List<List<Integer>> rf3 = ReplicaPlacer.place(brokers, 0, 20, 3, 7);

        // Then replication factor 2 fits on the unfenced brokers; 3 takes one fenced broker, never as leader
        assertThat(rf2).allSatisfy(replicas -> assertThat(replicas).containsExactlyInAnyOrder(1, 2));
        assertThat(rf3).allSatisfy(replicas -> {
            assertThat(replicas).hasSize(3).doesNotHaveDuplicates().contains(1, 2);
            assertThat(replicas.get(0)).isIn(1, 2);
        });
        assertThat(rf3.stream().map(replicas -> replicas.get(2)).distinct()).as("the fenced brokers share the load")
                .containsExactlyInAnyOrder(3, 4);
        assertThat(rf3.stream().filter(replicas -> replicas.get(0) == 1)).as("leaderships split evenly").hasSize(10);
        assertThat(ReplicaPlacer.place(brokers, 0, 20, 3, 7)).as("deterministic for a seed").isEqualTo(rf3);
    }

    @Test
    void replicasAreStripedOverRacksBeforeFencingIsConsidered() {
        // Given racks a (1, 2), b (3, 4), c (5, fenced 6)
        List<BrokerRegistration> brokers = List.of(broker(1, "a", false), broker(2, "a", false),
                broker(3, "b", false), broker(4, "b", false), broker(5, "c", false), broker(6, "c", true));

        // When
        List<List<Integer>> placed = ReplicaPlacer.place(brokers, 0, 30, 3, 11);

        // Then every partition spans the three racks, only unfenced brokers lead, and they lead evenly
        Map<Integer, Integer> leaders = new HashMap<>();
        for (List<Integer> replicas : placed) {
            Set<Integer> racks = new HashSet<>();
            replicas.forEach(id -> racks.add((id + 1) / 2));
            assertThat(racks).as("racks of %s", replicas).hasSize(3);
            assertThat(replicas).as("rack c gives its unfenced broker first").contains(5).doesNotContain(6);
            leaders.merge(replicas.get(0), 1, Integer::sum);
        }
        assertThat(leaders).as("each rack leads a third, its unfenced brokers in turn")
                .isEqualTo(Map.of(1, 5, 2, 5, 3, 5, 4, 5, 5, 10));

        // And with a rack of fenced brokers only, spread still wins (Kafka's priority): it holds a replica, never
        // the leader
        List<BrokerRegistration> fencedRack = List.of(broker(1, "a", false), broker(2, "a", false),
                broker(3, "b", true));
        assertThat(ReplicaPlacer.place(fencedRack, 0, 10, 2, 3)).allSatisfy(replicas -> {
            assertThat(replicas.get(0)).isIn(1, 2);
            assertThat(replicas.get(1)).isEqualTo(3);
        });
    }

    @Test
    void placementIsRefusedWithKafkasMessagesInKafkasOrder() {
        List<BrokerRegistration> fenced = List.of(broker(1, null, true), broker(2, null, true));
        List<BrokerRegistration> two = List.of(broker(1, null, false), broker(2, null, true));

        assertThat(ReplicaPlacer.check(two, 0)).contains("Invalid replication factor 0: the replication factor "
                + "must be positive.");
        assertThat(ReplicaPlacer.check(fenced, 3)).contains("All brokers are currently fenced.");
        assertThat(ReplicaPlacer.check(two, 3)).contains("The target replication factor of 3 cannot be reached "
                + "because only 2 broker(s) are registered.");
        assertThat(ReplicaPlacer.check(two, 2)).isEmpty();
        assertThatThrownBy(() -> ReplicaPlacer.place(fenced, 0, 1, 1, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("All brokers are currently fenced.");
    }

    @Test
    void createTopicsAndCreatePartitionsPlaceOnAFencedBrokerOutsideTheIsr() {
        // Given three brokers, broker 3 fenced (its heartbeats stopped)
        brokers(3);
        image = ControllerLogic.apply(image, logic.fenceExpired(image, 3));

        // When
        CreateTopicsResponseData.CreatableTopicResult created = create("rf3", 6, 3);
        CreatePartitionsResponseData.CreatePartitionsTopicResult grown = createPartitions("rf3", 9);

        // Then every partition has the three replicas, an ISR of the unfenced two and an unfenced leader
        assertThat(created.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(created.replicationFactor()).isEqualTo((short) 3);
        assertThat(grown.errorCode()).isEqualTo(Errors.NONE.code());
        Map<Integer, PartitionRegistration> partitions = image.topic("rf3").orElseThrow().partitions();
        assertThat(partitions).hasSize(9).allSatisfy((index, p) -> {
            assertThat(p.replicas()).containsExactlyInAnyOrder(1, 2, 3);
            assertThat(p.isr()).containsExactlyInAnyOrder(1, 2);
            assertThat(p.leader()).isIn(1, 2).isEqualTo(p.replicas().get(0));
        });
    }

    @Test
    void createTopicsAndCreatePartitionsRefuseAsKafkasController() {
        // Given two brokers, both fenced, then one unfenced
        brokers(2);
        image = ControllerLogic.apply(image, logic.fenceExpired(image, 1));
        image = ControllerLogic.apply(image, logic.fenceExpired(image, 2));
        CreateTopicsResponseData.CreatableTopicResult allFenced = create("t", 1, 1);
        run(logic.heartbeat(image, TestRequests.heartbeat(2, image.broker(2).orElseThrow().epoch())));

        // When
        CreateTopicsResponseData.CreatableTopicResult tooFew = create("t", 1, 3);
        CreateTopicsResponseData.CreatableTopicResult zero = create("t", 0, 0);
        assertThat(create("t", 1, 2).errorCode()).isEqualTo(Errors.NONE.code());
        image = ControllerLogic.apply(image, logic.fenceExpired(image, 2));
        CreatePartitionsResponseData.CreatePartitionsTopicResult growFenced = createPartitions("t", 2);

        // Then
        assertThat(allFenced.errorCode()).isEqualTo(Errors.INVALID_REPLICATION_FACTOR.code());
        assertThat(allFenced.errorMessage()).isEqualTo("Unable to replicate the partition 1 time(s): All brokers "
                + "are currently fenced.");
        assertThat(tooFew.errorCode()).isEqualTo(Errors.INVALID_REPLICATION_FACTOR.code());
        assertThat(tooFew.errorMessage()).isEqualTo("Unable to replicate the partition 3 time(s): The target "
                + "replication factor of 3 cannot be reached because only 2 broker(s) are registered.");
        assertThat(zero.errorCode()).as("the replication factor is checked first")
                .isEqualTo(Errors.INVALID_REPLICATION_FACTOR.code());
        assertThat(growFenced.errorCode()).isEqualTo(Errors.INVALID_REPLICATION_FACTOR.code());
        assertThat(growFenced.errorMessage()).as("CreatePartitions gives the placer's message alone")
                .isEqualTo("All brokers are currently fenced.");
    }

    private static BrokerRegistration broker(int id, String rack, boolean fenced) {
        return new BrokerRegistration(id, Uuid.ONE, 1, List.of(), Optional.ofNullable(rack), fenced, false);
    }

    private void brokers(int count) {
        for (int id = 1; id <= count; id++) {
            BrokerRegistrationResponseData registered = run(logic.registerBroker(image,
                    TestRequests.registration(id, null), b -> false));
            run(logic.heartbeat(image, TestRequests.heartbeat(id, registered.brokerEpoch())));
        }
    }

    private CreateTopicsResponseData.CreatableTopicResult create(String name, int partitions, int replication) {
        CreateTopicsResponseData response = handle(TestRequests.createTopic(name, partitions, replication,
                Map.of()));
        return response.topics().get(0);
    }

    private CreatePartitionsResponseData.CreatePartitionsTopicResult createPartitions(String name, int count) {
        CreatePartitionsRequestData request = new CreatePartitionsRequestData();
        request.topics().add(new CreatePartitionsRequestData.CreatePartitionsTopic().setName(name).setCount(count)
                .setAssignments(null));
        CreatePartitionsResponseData response = handle(request);
        return response.results().get(0);
    }

    private <R extends ApiMessage> R run(ControllerResult<R> result) {
        image = ControllerLogic.apply(image, result.records());
        return result.response();
    }

    @SuppressWarnings("unchecked")
    private <R extends ApiMessage> R handle(ApiMessage request) {
        return run((ControllerResult<R>) logic.handle(image, request, b -> true));
    }
}
