package io.cairn.broker.metrics;

import io.cairn.metadata.controller.ControllerEventListener;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The controller's times. Kafka's {@code kafka.controller:type=ControllerEventManager} times of the controller's
 * event loop, as millisecond summaries: {@code kafka_controller_controllereventmanager_eventqueuetimems} (waiting in
 * the queue) and {@code …_eventqueueprocessingtimems} (running), recorded for every event on a controller node (no
 * samples on a broker-only node). And Kafka's raft {@code commit-latency-avg} / {@code -max}
 * ({@code kafka_server_raftmetrics_commit_latency_avg}, {@code …_max}, milliseconds over the last 30 to 60 s, NaN
 * without commits): from the active controller's submission of a metadata log entry to the Ratis reply, which comes
 * once the quorum has committed the entry and this node has applied it.
 *
 * <p>Thread-safe; recording an event allocates nothing.
 */
public final class ControllerEventMetrics implements ControllerEventListener {

    private static final String PREFIX = "kafka.controller.controllereventmanager.";
    private static final String RAFT = "kafka.server.raftmetrics.";

    private final MillisSummary queueTime;
    private final MillisSummary processingTime;
    private final WindowedAvgMax commitLatency;

    ControllerEventMetrics(MeterRegistry registry, MillisSummaries summaries) {
        this.queueTime = summaries.register(PREFIX + "eventqueuetimems",
                "Milliseconds controller events waited in the event queue");
        this.processingTime = summaries.register(PREFIX + "eventqueueprocessingtimems",
                "Milliseconds the controller took to process an event");
        this.commitLatency = new WindowedAvgMax(registry.config().clock());
        Gauge.builder(RAFT + "commit.latency.avg", commitLatency, WindowedAvgMax::avg)
                .description("Mean milliseconds from appending a metadata entry to its commit (last 30 to 60 s)")
                .strongReference(true).register(registry);
        Gauge.builder(RAFT + "commit.latency.max", commitLatency, WindowedAvgMax::max)
                .description("Largest milliseconds from appending a metadata entry to its commit (last 30 to 60 s)")
                .strongReference(true).register(registry);
    }

    @Override
    public void onEvent(long queueNanos, long processingNanos) {
        queueTime.record(MillisSummaries.ms(queueNanos));
        processingTime.record(MillisSummaries.ms(processingNanos));
    }

    @Override
    public void onCommitted(long nanos) {
        commitLatency.record(MillisSummaries.ms(nanos));
    }
}
