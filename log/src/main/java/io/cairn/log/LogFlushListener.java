package io.cairn.log;

/**
 * Told of every segment flush of the Kafka kind (Kafka's {@code LogFlushStats.LogFlushRateAndTimeMs} times each
 * {@code LogSegment.flush}): the fsync of a segment's log and indexes when {@link PartitionLog#flush} moves the
 * recovery point ({@code flush.messages}, {@code flush.ms}, shutdown) or when a rolled segment is flushed. The
 * durable mode's group-commit fsyncs of the log data alone are not counted. Called on the flushing thread (a
 * producer's request-handler thread, the log background thread); implementations must be thread-safe and cheap.
 */
@FunctionalInterface
public interface LogFlushListener {

    /** A listener that does nothing. */
    LogFlushListener NONE = nanos -> { };

    /** One segment was flushed (or its flush failed) after {@code nanos} nanoseconds. */
    void onSegmentFlushed(long nanos);
}
