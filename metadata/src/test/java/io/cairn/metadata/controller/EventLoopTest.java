package io.cairn.metadata.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The real event loop tells its listener of every event it runs, executed or scheduled, after the event. */
class EventLoopTest {

    private record Event(long queueNanos, long processingNanos, boolean ranBefore) {
    }

    @Test
    void everyEventShouldBeReportedAfterItRanWithItsQueueAndProcessingTimes() throws Exception {
        // Given
        List<Event> events = new CopyOnWriteArrayList<>();
        CountDownLatch reported = new CountDownLatch(3);
        boolean[] ran = new boolean[3];
        EventLoop loop = EventLoop.singleThread("event-loop-test", (queue, processing) -> {
            events.add(new Event(queue, processing, ran[events.size()]));
            reported.countDown();
        });
        long slowMs = 50;
        try {
            // When: a slow event, one queued behind it, and one scheduled
            loop.execute(() -> {
                sleep(slowMs);
                ran[0] = true;
            });
            loop.execute(() -> ran[1] = true);
            loop.schedule(() -> ran[2] = true, 5);

            // Then: each reported after it ran; the slow one's processing and the next one's wait behind it measured
            assertThat(reported.await(30, TimeUnit.SECONDS)).isTrue();
            assertThat(events).hasSize(3).allSatisfy(event -> assertThat(event.ranBefore()).isTrue());
            assertThat(events.get(0).processingNanos()).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(slowMs));
            assertThat(events.get(1).queueNanos()).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(slowMs / 2));
            assertThat(events.get(1).processingNanos()).isLessThan(events.get(0).processingNanos());
        } finally {
            loop.close();
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
