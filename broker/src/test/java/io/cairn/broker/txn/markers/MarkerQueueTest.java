package io.cairn.broker.txn.markers;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.image.BrokerEndpoint;
import io.cairn.metadata.image.BrokerRegistration;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicImage;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.WriteTxnMarkersRequestData;
import io.cairn.wire.message.WriteTxnMarkersRequestData.WritableTxnMarker;
import io.cairn.wire.message.WriteTxnMarkersResponseData;
import io.cairn.wire.message.WriteTxnMarkersResponseData.WritableTxnMarkerPartitionResult;
import io.cairn.wire.message.WriteTxnMarkersResponseData.WritableTxnMarkerResult;
import io.cairn.wire.message.WriteTxnMarkersResponseData.WritableTxnMarkerTopicResult;
import io.cairn.wire.protocol.Uuid;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** The marker channel's routing and retry rules, driven by hand with explicit times and images. */
class MarkerQueueTest {

    private static final String LISTENER = "REPLICATION";
    private static final long BACKOFF = 100L;
    private static final TopicPartition A0 = new TopicPartition("a", 0);
    private static final TopicPartition A1 = new TopicPartition("a", 1);
    private static final TopicPartition B0 = new TopicPartition("b", 0);

    private final MarkerQueue queue = new MarkerQueue(LISTENER, BACKOFF, 4);

    /** An image with brokers 1-3 on the listener (broker 3 without it) and the given leaders of a-0, a-1, b-0. */
    private static MetadataImage image(int leaderA0, int leaderA1, Integer leaderB0) {
        Map<Integer, BrokerRegistration> brokers = new HashMap<>();
        for (int id = 1; id <= 3; id++) {
            String listener = id == 3 ? "OTHER" : LISTENER;
            brokers.put(id, new BrokerRegistration(id, new Uuid(id, id), 1L, List.of(new BrokerEndpoint(listener,
                    "host" + id, 9000 + id, (short) 0)), Optional.empty(), false, false));
        }
        Uuid a = new Uuid(0, 1);
        Uuid b = new Uuid(0, 2);
        Map<Uuid, TopicImage> topics = new HashMap<>();
        topics.put(a, new TopicImage("a", a, Map.of(0, partition(leaderA0), 1, partition(leaderA1))));
        Map<String, Uuid> ids = new HashMap<>(Map.of("a", a));
        if (leaderB0 != null) {
            topics.put(b, new TopicImage("b", b, Map.of(0, partition(leaderB0))));
            ids.put("b", b);
        }
        return new MetadataImage(1L, "c", 1, 1L, brokers, topics, ids, Map.of(), 0L, 0L, Map.of(), Map.of(), Map.of());
    }

    private static PartitionRegistration partition(int leader) {
        return new PartitionRegistration(List.of(1, 2, 3), List.of(1, 2, 3), leader, 0, 0);
    }

    private static MarkerQueue.Txn txn(String id, long producerId, int coordinatorEpoch, TopicPartition... tps) {
        return new MarkerQueue.Txn(id, producerId, (short) 0, true, coordinatorEpoch, List.of(tps));
    }

    /** The leader's answer: every partition of the request with the error {@code errors} gives it. */
    private static WriteTxnMarkersResponseData answer(WriteTxnMarkersRequestData request,
                                                      Function<TopicPartition, Errors> errors) {
        WriteTxnMarkersResponseData response = new WriteTxnMarkersResponseData();
        for (WritableTxnMarker marker : request.markers()) {
            WritableTxnMarkerResult result = new WritableTxnMarkerResult().setProducerId(marker.producerId());
            marker.topics().forEach(t -> {
                WritableTxnMarkerTopicResult topic = new WritableTxnMarkerTopicResult().setName(t.name());
                t.partitionIndexes().forEach(p -> topic.partitions().add(new WritableTxnMarkerPartitionResult()
                        .setPartitionIndex(p).setErrorCode(errors.apply(new TopicPartition(t.name(), p)).code())));
                result.topics().add(topic);
            });
            response.markers().add(result);
        }
        return response;
    }

    /** "destination:producerId:topic-partition,..." per request. */
    private static List<String> describe(List<MarkerQueue.Send> sends) {
        List<String> described = new ArrayList<>();
        for (MarkerQueue.Send send : sends) {
            StringBuilder text = new StringBuilder(send.destination().id() + "@" + send.destination().host() + ":"
                    + send.destination().port());
            for (WritableTxnMarker marker : send.request().markers()) {
                text.append(" ").append(marker.producerId()).append("/").append(marker.coordinatorEpoch());
                marker.topics().forEach(t -> t.partitionIndexes().forEach(p -> text.append(" ").append(t.name())
                        .append("-").append(p)));
            }
            described.add(text.toString());
        }
        return described;
    }

    @Test
    void markersAreGroupedPerLeaderAndTransactionAndCompleteWhenEveryPartitionIsWritten() {
        // Given
        MarkerQueue.Txn first = txn("t1", 10L, 3, A0, A1, B0);
        MarkerQueue.Txn second = txn("t2", 11L, 4, A0);
        queue.add(first);
        queue.add(second);
        List<MarkerQueue.Send> sends = queue.drain(image(1, 2, 1), 0L);

        // When
        sends.forEach(s -> queue.onResponse(s, answer(s.request(), tp -> Errors.NONE), 5L));

        // Then
        assertThat(describe(sends)).containsExactly("1@host1:9001 10/3 a-0 b-0 11/4 a-0", "2@host2:9002 10/3 a-1");
        assertThat(first.result).isCompleted();
        assertThat(second.result).isCompleted();
        assertThat(queue.size()).isZero();
    }

    @Test
    void retriableErrorsAndLostRequestsAreRoutedAgainAfterTheBackoffToTheNewLeader() {
        // Given
        MarkerQueue.Txn txn = txn("t", 10L, 0, A0, A1);
        queue.add(txn);
        List<MarkerQueue.Send> first = queue.drain(image(1, 2, 1), 0L);
        queue.onResponse(first.get(0), answer(first.get(0).request(), tp -> Errors.NOT_LEADER_OR_FOLLOWER), 10L);
        queue.onFailure(first.get(1), new IOException("connection reset"), 10L);

        // When
        List<MarkerQueue.Send> early = queue.drain(image(2, 2, 1), 109L);
        long readyAt = queue.nextReadyMs(109L);
        List<MarkerQueue.Send> again = queue.drain(image(2, 2, 1), 110L);

        // Then
        assertThat(early).isEmpty();
        assertThat(readyAt).isEqualTo(110L);
        assertThat(describe(again)).containsExactly("2@host2:9002 10/0 a-0 a-1");
        assertThat(txn.result).isNotDone();
        queue.onResponse(again.get(0), answer(again.get(0).request(), tp -> Errors.NONE), 120L);
        assertThat(txn.result).isCompleted();
    }

    @Test
    void aFencedCoordinatorEpochEndsTheTransactionExceptionallyAndDropsItsOtherMarkers() {
        // Given
        MarkerQueue.Txn txn = txn("t", 10L, 0, A0, A1);
        queue.add(txn);
        List<MarkerQueue.Send> sends = queue.drain(image(1, 2, 1), 0L);

        // When
        queue.onResponse(sends.get(0), answer(sends.get(0).request(), tp -> Errors.TRANSACTION_COORDINATOR_FENCED),
                5L);

        // Then
        assertThat(txn.result).isCompletedExceptionally();
        assertThat(Errors.forException(txn.result.handle((v, e) -> e).join()))
                .isEqualTo(Errors.TRANSACTION_COORDINATOR_FENCED);
        assertThat(queue.size()).isZero();
        queue.onResponse(sends.get(1), answer(sends.get(1).request(), tp -> Errors.NONE), 6L);
        assertThat(queue.drain(image(1, 2, 1), 1_000L)).isEmpty();
    }

    @Test
    void deletedPartitionsCountAsWrittenAndLeaderlessOnesWait() {
        // Given
        MarkerQueue.Txn txn = txn("t", 10L, 0, A0, A1, B0);
        queue.add(txn);

        // When
        List<MarkerQueue.Send> sends = queue.drain(image(PartitionRegistration.NO_LEADER, 3, null), 0L);

        // Then: b is gone, a-0 has no leader, a-1's leader has no endpoint on the inter-broker listener
        assertThat(sends).isEmpty();
        assertThat(queue.size()).isEqualTo(2);
        assertThat(queue.nextReadyMs(0L)).isEqualTo(BACKOFF);
        assertThat(queue.unknownDestinations()).isEqualTo(2);
        List<MarkerQueue.Send> later = queue.drain(image(1, 1, null), BACKOFF);
        assertThat(describe(later)).containsExactly("1@host1:9001 10/0 a-0 a-1");
        assertThat(queue.unknownDestinations()).isZero();
    }

    @Test
    void oneRequestPerDestinationIsInFlightAndTheQueueAdmitsCallsOnlyWhenThereIsRoom() {
        // Given
        MarkerQueue.Txn first = txn("t1", 10L, 0, A0, A1, B0);
        MarkerQueue.Txn second = txn("t2", 11L, 0, A0, B0);
        queue.add(first);
        List<MarkerQueue.Send> sends = queue.drain(image(1, 1, 1), 0L);

        // When
        queue.add(second);

        // Then
        assertThat(queue.waitingCalls()).isEqualTo(1);
        assertThat(queue.drain(image(1, 1, 1), 0L)).isEmpty();
        queue.onResponse(sends.get(0), answer(sends.get(0).request(), tp -> Errors.NONE), 1L);
        assertThat(queue.waitingCalls()).isZero();
        assertThat(describe(queue.drain(image(1, 1, 1), 1L))).containsExactly("1@host1:9001 11/0 a-0 b-0");
        queue.failAll(new IllegalStateException("closed"));
        assertThat(second.result).isCompletedExceptionally();
    }
}
