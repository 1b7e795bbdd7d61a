package io.cairn.broker.metrics;

import io.cairn.metadata.controller.ControllerEventListener;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Kafka's {@code kafka.controller:type=ControllerEventManager} times of the controller's event loop, as millisecond
 * summaries: {@code kafka_controller_controllereventmanager_eventqueuetimems} (waiting in the queue) and
 * {@code …_eventqueueprocessingtimems} (running), recorded for every event on a controller node (no samples on a
 * broker-only node). Thread-safe; recording allocates nothing.
 */
public final class ControllerEventMetrics implements ControllerEventListener {

    private static final String PREFIX = "kafka.controller.controllereventmanager.";

    private final DistributionSummary queueTime;
    private final DistributionSummary processingTime;

    ControllerEventMetrics(MeterRegistry registry) {
        this.queueTime = MillisSummaries.register(registry, PREFIX + "eventqueuetimems",
                "Milliseconds controller events waited in the event queue");
        this.processingTime = MillisSummaries.register(registry, PREFIX + "eventqueueprocessingtimems",
                "Milliseconds the controller took to process an event");
    }

    @Override
    public void onEvent(long queueNanos, long processingNanos) {
        queueTime.record(MillisSummaries.ms(queueNanos));
        processingTime.record(MillisSummaries.ms(processingNanos));
    }
}
