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
        CountDownLatch reported = new CountDownLatch(2);
        boolean[] ran = new boolean[2];
        EventLoop loop = EventLoop.singleThread("event-loop-test", (queue, processing) -> {
            events.add(new Event(queue, processing, ran[events.size()]));
            reported.countDown();
        });
        try {
            // When
            loop.execute(() -> ran[0] = true);
            loop.schedule(() -> ran[1] = true, 5);

            // Then
            assertThat(reported.await(30, TimeUnit.SECONDS)).isTrue();
            assertThat(events).hasSize(2).allSatisfy(event -> {
                assertThat(event.ranBefore()).isTrue();
                assertThat(event.queueNanos()).isNotNegative();
                assertThat(event.processingNanos()).isNotNegative();
            });
        } finally {
            loop.close();
        }
    }
}
