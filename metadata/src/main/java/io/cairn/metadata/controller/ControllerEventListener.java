package io.cairn.metadata.controller;

/**
 * Told of every event the controller's {@link EventLoop} runs, with Kafka's {@code ControllerEventManager} split:
 * the time the event waited in the queue ({@code EventQueueTimeMs}: from submission, or for a scheduled event from
 * the moment it became due, to the start of its run) and the time it ran ({@code EventQueueProcessingTimeMs}).
 * Called on the event loop's thread after each event; implementations must be thread-safe and cheap. Also told how
 * long the active controller's appends took to commit ({@link #onCommitted}).
 */
@FunctionalInterface
public interface ControllerEventListener {

    /** A listener that does nothing. */
    ControllerEventListener NONE = (queueNanos, processingNanos) -> { };

    void onEvent(long queueNanos, long processingNanos);

    /**
     * An entry the active controller appended is committed and applied on this node, {@code nanos} after it was
     * submitted to the log (Kafka's raft {@code commit-latency}). Called on a thread of the log; cheap.
     */
    default void onCommitted(long nanos) {
    }
}
