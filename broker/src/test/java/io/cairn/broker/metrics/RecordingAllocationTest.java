package io.cairn.broker.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.FetchRequestData;
import io.micrometer.core.instrument.MockClock;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

/**
 * Recording costs no allocation on the hot path: once a topic's and an API's meters are resolved, counting a
 * produced partition, a fetched partition, a finished request, a segment flush (on a produce thread with
 * {@code flush.messages}) and a controller event allocates nothing (measured with the JVM's
 * per-thread allocation counter over many iterations after a warm-up; a single allocation per iteration would show
 * as megabytes).
 */
class RecordingAllocationTest {

    private static final int ITERATIONS = 200_000;

    @Test
    void recordingResolvedMetersShouldAllocateNothing() {
        // Given
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        assumeThat(threads.isThreadAllocatedMemorySupported()).as("per-thread allocation counter").isTrue();
        BrokerMetrics metrics = BrokerMetrics.withClock(new MockClock());
        TopicMeters topic = metrics.topics().forTopic("orders");
        ApiRequestMetrics produce = metrics.requests().forApi(ApiKey.PRODUCE);
        for (int i = 0; i < ITERATIONS; i++) {
            recordOnce(topic, produce, metrics, i);
        }
        long threadId = Thread.currentThread().getId();

        // When
        long before = threads.getThreadAllocatedBytes(threadId);
        for (int i = 0; i < ITERATIONS; i++) {
            recordOnce(topic, produce, metrics, i);
        }
        long allocated = threads.getThreadAllocatedBytes(threadId) - before;

        // Then
        // Less than one byte per iteration: an object per iteration would be at least 16 bytes each (3.2 MB); what
        // remains is the JIT's and the profiler's own bookkeeping on this thread.
        assertThat(allocated).as("bytes allocated by %d recordings", ITERATIONS).isLessThan(ITERATIONS);
    }

    @Test
    void resolvingTheMetersOfARequestShouldAllocateNothing() {
        // Given: what the dispatcher, the produce path and the fetch path resolve per request (an array read for the
        // API, the Fetch split from the decoded body, one lookup per topic of the request)
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        assumeThat(threads.isThreadAllocatedMemorySupported()).as("per-thread allocation counter").isTrue();
        BrokerMetrics metrics = BrokerMetrics.withClock(new MockClock());
        FetchRequestData fetch = new FetchRequestData().setReplicaId(-1);
        String topic = new String("orders".toCharArray());
        for (int i = 0; i < ITERATIONS; i++) {
            resolveOnce(metrics, fetch, topic);
        }
        long threadId = Thread.currentThread().getId();

        // When
        long before = threads.getThreadAllocatedBytes(threadId);
        for (int i = 0; i < ITERATIONS; i++) {
            resolveOnce(metrics, fetch, topic);
        }
        long allocated = threads.getThreadAllocatedBytes(threadId) - before;

        // Then
        assertThat(allocated).as("bytes allocated by %d resolutions", ITERATIONS).isLessThan(ITERATIONS);
    }

    private static void resolveOnce(BrokerMetrics metrics, FetchRequestData fetch, String topic) {
        metrics.requests().forApi(ApiKey.FETCH).recordRequest((short) 17);
        metrics.requests().fetchSplit(ApiKey.FETCH, (short) 17, fetch).recordError(Errors.NONE);
        metrics.topics().forTopic(topic).totalFetchRequest();
    }

    private static void recordOnce(TopicMeters topic, ApiRequestMetrics produce, BrokerMetrics metrics, int i) {
        topic.totalProduceRequest();
        topic.messagesIn(10, 1_000);
        topic.totalFetchRequest();
        topic.bytesOut(1_000, false);
        produce.recordRequest((short) 9);
        produce.recordError(Errors.NONE);
        produce.recordTimes(0, 1_000L + i, 2_000_000L + i, 5_000_000L, 5_100_000L, 5_200_000L + i, 0);
        produce.recordSizes(1_100, 60);
        metrics.logFlush().onSegmentFlushed(3_000_000L + i);
        metrics.controllerEvents().onEvent(20_000L + i, 400_000L + i);
    }
}
