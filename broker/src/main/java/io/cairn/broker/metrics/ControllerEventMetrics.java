package io.cairn.broker.metrics;

import io.cairn.metadata.controller.ControllerEventListener;

/**
 * Kafka's {@code kafka.controller:type=ControllerEventManager} times of the controller's event loop, as millisecond
 * summaries: {@code kafka_controller_controllereventmanager_eventqueuetimems} (waiting in the queue) and
 * {@code …_eventqueueprocessingtimems} (running), recorded for every event on a controller node (no samples on a
 * broker-only node). Thread-safe; recording allocates nothing.
 */
public final class ControllerEventMetrics implements ControllerEventListener {

    private static final String PREFIX = "kafka.controller.controllereventmanager.";

    private final MillisSummary queueTime;
    private final MillisSummary processingTime;

    ControllerEventMetrics(MillisSummaries summaries) {
        this.queueTime = summaries.register(PREFIX + "eventqueuetimems",
                "Milliseconds controller events waited in the event queue");
        this.processingTime = summaries.register(PREFIX + "eventqueueprocessingtimems",
                "Milliseconds the controller took to process an event");
    }

    @Override
    public void onEvent(long queueNanos, long processingNanos) {
        queueTime.record(MillisSummaries.ms(queueNanos));
        processingTime.record(MillisSummaries.ms(processingNanos));
    }
}
