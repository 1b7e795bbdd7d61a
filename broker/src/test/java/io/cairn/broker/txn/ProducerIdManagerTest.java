package io.cairn.broker.txn;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.Time;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.MetadataListener;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AllocateProducerIdsRequestData;
import io.cairn.wire.message.AllocateProducerIdsResponseData;
import io.cairn.wire.protocol.ApiMessage;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The producer-id block logic of {@link ProducerIdManager} against a scripted controller. */
class ProducerIdManagerTest {

    /** A metadata node whose AllocateProducerIds answers the test completes by hand. */
    private static final class ScriptedController implements MetadataNode {
        final List<CompletableFuture<ApiMessage>> requests = new ArrayList<>();
        final List<AllocateProducerIdsRequestData> sent = new ArrayList<>();

        @Override
        public MetadataImage currentImage() {
            return MetadataImage.EMPTY;
        }

        @Override
        public MetadataImage subscribe(MetadataListener listener) {
            return MetadataImage.EMPTY;
        }

        @Override
        public void unsubscribe(MetadataListener listener) {
        }

        @Override
        public synchronized CompletableFuture<ApiMessage> submit(ApiMessage request) {
            CompletableFuture<ApiMessage> future = new CompletableFuture<>();
            sent.add((AllocateProducerIdsRequestData) request);
            requests.add(future);
            return future;
        }

        @Override
        public String clusterId() {
            return "cluster";
        }

        @Override
        public int nodeId() {
            return 1;
        }

        @Override
        public boolean isActiveController() {
            return true;
        }

        @Override
        public int activeControllerId() {
            return 1;
        }

        @Override
        public void close() {
        }

        void answer(int index, long start, int length) {
            requests.get(index).complete(new AllocateProducerIdsResponseData().setProducerIdStart(start)
                    .setProducerIdLen(length));
        }

        void fail(int index, Errors error) {
            requests.get(index).complete(new AllocateProducerIdsResponseData().setErrorCode(error.code())
                    .setProducerIdStart(-1));
        }
    }

    /** A clock the test moves. */
    private static final class ManualTime implements Time {
        final AtomicLong now = new AtomicLong(1_000_000L);

        @Override
        public long milliseconds() {
            return now.get();
        }

        @Override
        public long nanoseconds() {
            return now.get() * 1_000_000L;
        }

        @Override
        public void sleep(long ms) {
            now.addAndGet(ms);
        }
    }

    private final ScriptedController controller = new ScriptedController();
    private final ManualTime time = new ManualTime();
    private final ProducerIdManager manager = new ProducerIdManager(controller, 1, time);

    @Test
    void theFirstCallerWaitsForTheFirstBlockAndLaterCallersAreAnsweredAtOnce() {
        // When
        CompletableFuture<Long> first = manager.generateProducerId();

        // Then
        assertThat(first).isNotDone();
        assertThat(controller.sent).hasSize(1);
        assertThat(controller.sent.get(0).brokerId()).isEqualTo(1);

        controller.answer(0, 5000L, 10);
        assertThat(first).isCompletedWithValue(5000L);
        assertThat(manager.generateProducerId()).isCompletedWithValue(5001L);
        assertThat(controller.sent).hasSize(1);
    }

    @Test
    void theNextBlockIsRequestedWhenNinetyPercentOfTheCurrentOneIsUsed() {
        // Given
        manager.generateProducerId();
        controller.answer(0, 0L, 10);

        // When: ids 0..8 handed out, the 9th (90%) asks for the next block
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            ids.add(manager.generateProducerId().join());
        }
        assertThat(controller.sent).hasSize(1);
        ids.add(manager.generateProducerId().join());

        // Then
        assertThat(ids).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L);
        assertThat(controller.sent).hasSize(2);
        controller.answer(1, 10L, 10);
        assertThat(manager.generateProducerId()).isCompletedWithValue(10L);
        assertThat(manager.generateProducerId()).isCompletedWithValue(11L);
    }

    @Test
    void aFailedAllocationIsCoordinatorLoadInProgressAndIsRetriedAfterTheBackoff() {
        // Given
        CompletableFuture<Long> first = manager.generateProducerId();

        // When
        controller.fail(0, Errors.STALE_BROKER_EPOCH);
        CompletableFuture<Long> duringBackoff = manager.generateProducerId();

        // Then
        assertThat(first).isCompletedExceptionally();
        assertThat(first.handle((id, e) -> Errors.forException(e)).join())
                .isEqualTo(Errors.COORDINATOR_LOAD_IN_PROGRESS);
        assertThat(duringBackoff.handle((id, e) -> Errors.forException(e)).join())
                .isEqualTo(Errors.COORDINATOR_LOAD_IN_PROGRESS);
        assertThat(controller.sent).hasSize(1);

        time.sleep(ProducerIdManager.RETRY_BACKOFF_MS);
        CompletableFuture<Long> retried = manager.generateProducerId();
        assertThat(controller.sent).hasSize(2);
        controller.answer(1, 2000L, 1000);
        assertThat(retried).isCompletedWithValue(2000L);
    }

    @Test
    void aBlockBelowTheCurrentOneIsRejected() {
        // Given
        manager.generateProducerId();
        controller.answer(0, 1000L, 10);
        for (int i = 0; i < 9; i++) {
            manager.generateProducerId().join();
        }

        // When: the prefetch answers a block that overlaps the current one
        controller.answer(1, 500L, 10);
        CompletableFuture<Long> exhausted = manager.generateProducerId();

        // Then
        assertThat(exhausted.handle((id, e) -> Errors.forException(e)).join())
                .isEqualTo(Errors.COORDINATOR_LOAD_IN_PROGRESS);
    }

    @Test
    void aControllerThatCannotBeReachedIsCoordinatorLoadInProgress() {
        // Given
        CompletableFuture<Long> first = manager.generateProducerId();

        // When
        controller.requests.get(0).completeExceptionally(Errors.NOT_CONTROLLER.exception());

        // Then
        assertThat(first.handle((id, e) -> Errors.forException(e)).join())
                .isEqualTo(Errors.COORDINATOR_LOAD_IN_PROGRESS);
    }
}
