package io.cairn.isr.fetcher;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.isr.fetcher.LeaderEndpoint.PartitionFetchRequest;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.protocol.Uuid;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The client side of KIP-227 sessions, as Kafka's {@code FetchSessionHandler} keeps them. */
class FetchSessionHandlerTest {

    private static final Uuid ID = new Uuid(1L, 2L);
    private static final TopicPartition P0 = new TopicPartition("t", 0);
    private static final TopicPartition P1 = new TopicPartition("t", 1);

    private static PartitionFetchRequest at(long offset) {
        return new PartitionFetchRequest(ID, offset, 0L, 1024, 3, 3);
    }

    private static Map<TopicPartition, PartitionFetchRequest> fetch(long p0, long p1) {
        Map<TopicPartition, PartitionFetchRequest> next = new LinkedHashMap<>();
        next.put(P0, at(p0));
        if (p1 >= 0) {
            next.put(P1, at(p1));
        }
        return next;
    }

    @Test
    void aFullFetchOpensASessionAndIncrementalFetchesCarryOnlyChangesAndForgottenPartitions() {
        // Given
        FetchSessionHandler handler = new FetchSessionHandler(1);

        // When: the first fetch is full
        FetchSessionHandler.Plan full = handler.build(fetch(0, 0));

        // Then
        assertThat(full.isFull()).isTrue();
        assertThat(full.toSend()).containsOnlyKeys(P0, P1);
        assertThat(handler.handleResponse(Errors.NONE.code(), 77, Set.of(P0, P1))).isTrue();
        assertThat(handler.sessionTopicNames()).containsEntry(ID, "t");

        // When: only p0 moved
        FetchSessionHandler.Plan incremental = handler.build(fetch(5, 0));

        // Then
        assertThat(incremental.sessionId()).isEqualTo(77);
        assertThat(incremental.epoch()).isEqualTo(1);
        assertThat(incremental.toSend()).containsOnlyKeys(P0);
        assertThat(incremental.toForget()).isEmpty();
        assertThat(handler.handleResponse(Errors.NONE.code(), 77, Set.of(P0))).isTrue();

        // When: p1 is no longer wanted
        FetchSessionHandler.Plan forget = handler.build(fetch(5, -1));

        // Then
        assertThat(forget.epoch()).isEqualTo(2);
        assertThat(forget.toSend()).isEmpty();
        assertThat(forget.toForget()).containsExactly(new FetchSessionHandler.Forgotten(ID, P1));
    }

    @Test
    void sessionErrorsAndSendFailuresFallBackToAFullFetch() {
        // Given
        FetchSessionHandler handler = new FetchSessionHandler(1);
        handler.build(fetch(0, 0));
        handler.handleResponse(Errors.NONE.code(), 77, Set.of(P0, P1));

        // When: the leader lost the session
        handler.build(fetch(1, 0));
        assertThat(handler.handleResponse(Errors.FETCH_SESSION_ID_NOT_FOUND.code(), 0, Set.of())).isFalse();

        // Then: a full fetch without session id
        FetchSessionHandler.Plan full = handler.build(fetch(1, 0));
        assertThat(full.isFull()).isTrue();
        assertThat(full.sessionId()).isZero();
        assertThat(full.toSend()).containsOnlyKeys(P0, P1);

        // When: a session continues, then a send fails
        handler.handleResponse(Errors.NONE.code(), 88, Set.of(P0, P1));
        handler.build(fetch(2, 0));
        handler.handleError(new IOException("connection reset"));

        // Then: the next fetch is full and closes session 88
        FetchSessionHandler.Plan again = handler.build(fetch(2, 0));
        assertThat(again.isFull()).isTrue();
        assertThat(again.sessionId()).isEqualTo(88);
        assertThat(again.epoch()).isZero();
    }

    @Test
    void anIncrementalResponseNamingAPartitionOutsideTheSessionIsRefused() {
        FetchSessionHandler handler = new FetchSessionHandler(1);
        handler.build(fetch(0, -1));
        handler.handleResponse(Errors.NONE.code(), 5, Set.of(P0));
        handler.build(fetch(1, -1));

        assertThat(handler.handleResponse(Errors.NONE.code(), 5, Set.of(P0, P1))).isFalse();
        assertThat(handler.build(fetch(1, -1)).isFull()).isTrue();
    }
}
