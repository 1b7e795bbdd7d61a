package io.cairn.broker.txn.markers;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.isr.client.SourceBroker;
import io.cairn.log.Time;
import io.cairn.metadata.image.BrokerEndpoint;
import io.cairn.metadata.image.BrokerRegistration;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicImage;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.WriteTxnMarkersRequestData;
import io.cairn.wire.message.WriteTxnMarkersResponseData;
import io.cairn.wire.message.WriteTxnMarkersResponseData.WritableTxnMarkerPartitionResult;
import io.cairn.wire.message.WriteTxnMarkersResponseData.WritableTxnMarkerResult;
import io.cairn.wire.message.WriteTxnMarkersResponseData.WritableTxnMarkerTopicResult;
import io.cairn.wire.protocol.Uuid;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The channel's threads over a transport answering from memory: a leader that moves, a slow leader, close. */
@Timeout(30)
class TransactionMarkerChannelTest {

    private static final String LISTENER = "REPLICATION";
    private static final TopicPartition A0 = new TopicPartition("a", 0);
    private static final TopicPartition B0 = new TopicPartition("b", 0);

    private final AtomicReference<MetadataImage> image = new AtomicReference<>(image(1, 1));
    private final BlockingQueue<String> sent = new LinkedBlockingQueue<>();

    private static MetadataImage image(int leaderOfA, int leaderOfB) {
        Map<Integer, BrokerRegistration> brokers = Map.of(
                1, new BrokerRegistration(1, new Uuid(1, 1), 1L, List.of(new BrokerEndpoint(LISTENER, "h1", 1,
                        (short) 0)), Optional.empty(), false, false),
                2, new BrokerRegistration(2, new Uuid(2, 2), 1L, List.of(new BrokerEndpoint(LISTENER, "h2", 2,
                        (short) 0)), Optional.empty(), false, false));
        Uuid a = new Uuid(0, 1);
        Uuid b = new Uuid(0, 2);
        return new MetadataImage(1L, "c", 1, 1L, brokers,
                Map.of(a, new TopicImage("a", a, Map.of(0, new PartitionRegistration(List.of(1, 2), List.of(1, 2),
                        leaderOfA, 0, 0))), b, new TopicImage("b", b, Map.of(0, new PartitionRegistration(
                        List.of(1, 2), List.of(1, 2), leaderOfB, 0, 0)))),
                Map.of("a", a, "b", b), Map.of(), 0L, 0L, Map.of(), Map.of(), Map.of());
    }

    private static WriteTxnMarkersResponseData answer(WriteTxnMarkersRequestData request, Errors error) {
        WriteTxnMarkersResponseData response = new WriteTxnMarkersResponseData();
        request.markers().forEach(m -> {
            WritableTxnMarkerResult result = new WritableTxnMarkerResult().setProducerId(m.producerId());
            m.topics().forEach(t -> {
                WritableTxnMarkerTopicResult topic = new WritableTxnMarkerTopicResult().setName(t.name());
                t.partitionIndexes().forEach(p -> topic.partitions().add(new WritableTxnMarkerPartitionResult()
                        .setPartitionIndex(p).setErrorCode(error.code())));
                result.topics().add(topic);
            });
            response.markers().add(result);
        });
        return response;
    }

    /** A transport whose broker 1 answers {@code first} until the image moves a-0 to broker 2, which answers NONE. */
    private final class Leaders implements MarkerTransport {
        private final CountDownLatch release;

        Leaders(CountDownLatch release) {
            this.release = release;
        }

        @Override
        public WriteTxnMarkersResponseData send(SourceBroker destination, WriteTxnMarkersRequestData request)
                throws IOException {
            String topics = request.markers().get(0).topics().stream().map(t -> t.name())
                    .reduce((x, y) -> x + "," + y).orElse("");
            sent.add(destination.id() + ":" + topics);
            if (destination.id() == 2) {
                return answer(request, Errors.NONE);
            }
            try {
                if (!release.await(20, TimeUnit.SECONDS)) {
                    throw new IOException("not released");
                }
            } catch (InterruptedException e) {
                throw new IOException(e);
            }
            image.set(image(2, 2));
            return answer(request, Errors.NOT_LEADER_OR_FOLLOWER);
        }

        @Override
        public void close() {
        }
    }

    @Test
    void markersFollowTheirPartitionsToTheNewLeaderAndCompleteOnceAllAreWritten() throws Exception {
        // Given
        CountDownLatch release = new CountDownLatch(1);
        try (TransactionMarkerChannel channel = new TransactionMarkerChannel(image::get, new Leaders(release),
                Time.SYSTEM, new TransactionMarkerChannel.Config(LISTENER, 10L, 100, 1_000))) {
            channel.start();
            CompletableFuture<Void> written = channel.writeMarkers("t", 7L, (short) 0, true, 0, List.of(A0, B0))
                    .toCompletableFuture();

            // When: broker 1 answers NOT_LEADER_OR_FOLLOWER once the partitions moved to broker 2
            assertThat(sent.poll(20, TimeUnit.SECONDS)).isEqualTo("1:a,b");
            release.countDown();
            written.get(20, TimeUnit.SECONDS);

            // Then
            assertThat(sent.poll(20, TimeUnit.SECONDS)).isEqualTo("2:a,b");
            assertThat(channel.queuedMarkers()).isZero();
        }
    }

    @Test
    void closingFailsWhatIsStillQueuedAndLaterCalls() throws Exception {
        // Given: broker 1 never answers before the close
        CountDownLatch never = new CountDownLatch(1);
        TransactionMarkerChannel channel = new TransactionMarkerChannel(image::get, new Leaders(never), Time.SYSTEM,
                new TransactionMarkerChannel.Config(LISTENER, 10L, 100, 1_000));
        channel.start();
        CompletableFuture<Void> pending = channel.writeMarkers("t", 7L, (short) 0, false, 0, List.of(A0))
                .toCompletableFuture();
        assertThat(sent.poll(20, TimeUnit.SECONDS)).isEqualTo("1:a");

        // When
        channel.close();
        never.countDown();

        // Then
        assertThat(pending).isCompletedExceptionally();
        assertThat(channel.writeMarkers("t", 7L, (short) 0, false, 0, List.of(A0)).toCompletableFuture())
                .isCompletedExceptionally();
    }
}
