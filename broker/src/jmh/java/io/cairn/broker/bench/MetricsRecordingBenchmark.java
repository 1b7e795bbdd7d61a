package io.cairn.broker.bench;

import io.cairn.broker.metrics.ApiRequestMetrics;
import io.cairn.broker.metrics.BrokerMetrics;
import io.cairn.broker.metrics.TopicMeters;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What the broker's hot path pays per request for its metrics: the meters of one produced partition and one
 * fetched partition (topic and all-topics counters) and of one finished request (count, outcome, seven phase
 * summaries and two size summaries), against the same number of bare {@link LongAdder} increments. Run with
 * {@code -prof gc} to see the allocation rate (zero expected). Results are nanoseconds per request.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class MetricsRecordingBenchmark {

    private BrokerMetrics metrics;
    private TopicMeters topic;
    private ApiRequestMetrics produce;
    private final LongAdder[] adders = new LongAdder[12];
    private long tick;

    @Setup
    public void setUp() {
        metrics = BrokerMetrics.create();
        topic = metrics.topics().forTopic("bench");
        produce = metrics.requests().forApi(ApiKey.PRODUCE);
        for (int i = 0; i < adders.length; i++) {
            adders[i] = new LongAdder();
        }
    }

    @TearDown
    public void tearDown() {
        metrics.close();
    }

    /** The metrics of one produce request with one partition and of one fetched partition. */
    @Benchmark
    public void recordOneRequest() {
        long t = tick++;
        topic.totalProduceRequest();
        topic.messagesIn(10, 1_000);
        topic.totalFetchRequest();
        topic.bytesOut(1_000, false);
        produce.recordRequest((short) 11);
        produce.recordError(Errors.NONE);
        produce.recordTimes(t, t + 20_000, t + 200_000, t + 300_000, t + 320_000, t + 400_000, 0);
        produce.recordSizes(1_100, 60);
    }

    /** The floor: as many plain counter increments as the request above makes meter updates. */
    @Benchmark
    public void bareCounters() {
        for (LongAdder adder : adders) {
            adder.increment();
        }
    }
}
