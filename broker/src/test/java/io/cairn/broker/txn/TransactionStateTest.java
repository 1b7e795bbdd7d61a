package io.cairn.broker.txn;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** {@link TransactionState} against Kafka 4.1.1's own {@code TransactionState}: ids, names and transitions. */
class TransactionStateTest {

    @Test
    void idsNamesAndExpirableStatesAreKafkas() {
        // Given
        org.apache.kafka.coordinator.transaction.TransactionState[] kafka =
                org.apache.kafka.coordinator.transaction.TransactionState.values();

        // When / Then
        assertThat(TransactionState.values()).hasSameSizeAs(kafka);
        for (org.apache.kafka.coordinator.transaction.TransactionState state : kafka) {
            TransactionState ours = TransactionState.fromId(state.id()).orElseThrow();
            assertThat(ours.stateName()).isEqualTo(state.stateName());
            assertThat(TransactionState.fromName(state.stateName())).contains(ours);
            assertThat(ours.isComplete()).isEqualTo(state.isExpirationAllowed());
        }
    }

    @Test
    void legalTransitionsAreKafkas() {
        // Given: Kafka 4.1's states (transaction.version 2 also aborts from Empty, CompleteCommit and CompleteAbort)
        // When / Then
        for (org.apache.kafka.coordinator.transaction.TransactionState state
                : org.apache.kafka.coordinator.transaction.TransactionState.values()) {
            Set<TransactionState> kafkas = state.validPreviousStates().stream()
                    .map(s -> TransactionState.fromId(s.id()).orElseThrow()).collect(Collectors.toSet());
            TransactionState ours = TransactionState.fromId(state.id()).orElseThrow();
            assertThat(ours.validPreviousStates()).as(ours.stateName()).isEqualTo(kafkas);
        }
    }
}
