package io.cairn.metadata.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.record.PartitionChangeRecord;
import io.cairn.wire.protocol.Uuid;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.IntPredicate;
import org.junit.jupiter.api.Test;

/** Kafka's PartitionChangeBuilder rules without ELR for a broker leaving (fenced or shutting down). */
class PartitionElectionTest {

    private static final Uuid TOPIC = new Uuid(1, 2);

    private static IntPredicate usable(Integer... ids) {
        Set<Integer> set = Set.of(ids);
        return set::contains;
    }

    @Test
    void aLeavingFollowerLeavesTheIsrAndTheLeaderStaysWithoutAnEpochBump() {
        // Given
        PartitionRegistration p = new PartitionRegistration(List.of(1, 2, 3), List.of(1, 2, 3), 1, 4, 9);

        // When
        Optional<PartitionChangeRecord> change = PartitionElection.rebalance(TOPIC, 0, p, usable(1, 3), 2, false);

        // Then
        assertThat(change).isPresent();
        assertThat(change.get().isr()).containsExactly(1, 3);
        assertThat(change.get().leader()).isEqualTo(-2);
    }

    @Test
    void aLeavingLeaderIsReplacedByTheFirstUsableIsrMemberInReplicaOrder() {
        // Given
        PartitionRegistration p = new PartitionRegistration(List.of(1, 3, 2), List.of(2, 3, 1), 1, 4, 9);

        // When
        Optional<PartitionChangeRecord> change = PartitionElection.rebalance(TOPIC, 0, p, usable(2, 3), 1, false);

        // Then
        assertThat(change.orElseThrow().leader()).isEqualTo(3);
        assertThat(change.get().isr()).containsExactly(2, 3);
    }

    @Test
    void theLastIsrMemberStaysInTheIsrAndThePartitionHasNoLeader() {
        // Given
        PartitionRegistration p = new PartitionRegistration(List.of(1, 2), List.of(1), 1, 4, 9);

        // When
        Optional<PartitionChangeRecord> change = PartitionElection.rebalance(TOPIC, 0, p, usable(2), 1, false);

        // Then
        assertThat(change.orElseThrow().leader()).isEqualTo(PartitionRegistration.NO_LEADER);
        assertThat(change.get().isr()).isNull();
    }

    @Test
    void anUncleanElectionPicksAUsableReplicaOutsideTheIsrAsSoleMember() {
        // Given
        PartitionRegistration p = new PartitionRegistration(List.of(1, 2, 3), List.of(1), 1, 4, 9);

        // When
        Optional<PartitionChangeRecord> change = PartitionElection.rebalance(TOPIC, 0, p, usable(3), 1, true);

        // Then
        assertThat(change.orElseThrow().leader()).isEqualTo(3);
        assertThat(change.get().isr()).containsExactly(3);
    }

    @Test
    void nothingChangesWhenTheLeavingBrokerIsNotInTheIsrAndTheLeaderIsUsable() {
        // Given
        PartitionRegistration p = new PartitionRegistration(List.of(1, 2), List.of(1), 1, 4, 9);

        // When
        Optional<PartitionChangeRecord> change = PartitionElection.rebalance(TOPIC, 0, p, usable(1), 2, false);

        // Then
        assertThat(change).isEmpty();
    }
}
