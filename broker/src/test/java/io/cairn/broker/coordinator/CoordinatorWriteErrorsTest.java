package io.cairn.broker.coordinator;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.wire.error.Errors;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

class CoordinatorWriteErrorsTest {

    @Test
    void appendErrorsShouldMapToTheErrorsKafkaCoordinatorsAnswer() {
        // Given
        Errors[] appendErrors = {Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.NOT_ENOUGH_REPLICAS,
            Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND, Errors.REQUEST_TIMED_OUT, Errors.NOT_LEADER_OR_FOLLOWER,
            Errors.KAFKA_STORAGE_ERROR, Errors.MESSAGE_TOO_LARGE, Errors.RECORD_LIST_TOO_LARGE,
            Errors.INVALID_FETCH_SIZE, Errors.NOT_COORDINATOR, Errors.UNKNOWN_SERVER_ERROR};

        // When
        Errors[] mapped = new Errors[appendErrors.length];
        for (int i = 0; i < appendErrors.length; i++) {
            mapped[i] = CoordinatorWriteErrors.operationError(appendErrors[i]);
        }

        // Then
        assertThat(mapped).containsExactly(Errors.COORDINATOR_NOT_AVAILABLE, Errors.COORDINATOR_NOT_AVAILABLE,
            Errors.COORDINATOR_NOT_AVAILABLE, Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR,
            Errors.NOT_COORDINATOR, Errors.UNKNOWN_SERVER_ERROR, Errors.UNKNOWN_SERVER_ERROR,
            Errors.UNKNOWN_SERVER_ERROR, Errors.NOT_COORDINATOR, Errors.UNKNOWN_SERVER_ERROR);
    }

    @Test
    void aWrappedFailureShouldMapByItsCause() {
        // Given
        Throwable failure = new CompletionException(Errors.NOT_ENOUGH_REPLICAS.exception());

        // When
        Errors mapped = CoordinatorWriteErrors.operationError(failure);

        // Then
        assertThat(mapped).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
    }
}
