package io.cairn.broker.net;

import io.cairn.broker.handler.ErrorCounter;
import io.cairn.broker.metrics.ApiRequestMetrics;
import io.cairn.log.Time;
import io.cairn.wire.error.Errors;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The timestamps of one request on its way through the broker (Kafka keeps the same ones on its
 * {@code RequestChannel.Request}): dispatched, taken by a handler, handler returned, response complete, response
 * taken by the event loop, response written; on completion of the write they go to the request's meters.
 *
 * <p>With Kafka's request logger ({@code kafka.request.logger}, {@code kafka-request.log} in Kafka's log4j2 layout) at
 * DEBUG, a finished request is also logged there with its times, as Kafka's {@code RequestChannel} logs
 * "Completed request"; the description is only built when that logger is enabled.
 *
 * <p>Written by the threads the request passes through in turn; each hand-over goes through a future completion
 * or an executor hand-off, which orders the writes before the reads. Not otherwise thread-safe.
 */
final class RequestTimes implements ChannelFutureListener, ErrorCounter {

    /** Kafka's request logger, by Kafka's name, so a Kafka log4j2 configuration routes it as it does Kafka's. */
    static final Logger REQUEST_LOGGER = LogManager.getLogger("kafka.request.logger");

    private final Time time;
    private final ApiRequestMetrics api;
    /** Fetch's FetchConsumer/FetchFollower meters, else null. */
    private final ApiRequestMetrics split;
    private final int requestBytes;
    private final long startNanos;
    private long dequeueNanos;
    private long localDoneNanos;
    private long responseDoneNanos;
    private long responseDequeueNanos;
    private int responseBytes;
    /** The quota throttle time set on the response (Kafka's {@code apiThrottleTimeMs}), in ms. */
    private int throttleTimeMs;
    /** What the request logger prints for this request, or null when that logger is off. */
    private String description;

    RequestTimes(Time time, ApiRequestMetrics api, ApiRequestMetrics split, int requestBytes) {
        this.time = time;
        this.api = api;
        this.split = split;
        this.requestBytes = requestBytes;
        this.startNanos = time.nanoseconds();
        this.dequeueNanos = startNanos;
        this.localDoneNanos = startNanos;
    }

    /** Counts the request under its API (and Fetch's split). */
    void recordRequest(short version) {
        api.recordRequest(version);
        if (split != null) {
            split.recordRequest(version);
        }
    }

    /** Counts the request's outcome under its API (and Fetch's split). */
    void recordError(Errors error) {
        api.recordError(error);
        if (split != null) {
            split.recordError(error);
        }
    }

    /** Counts one error code the response carries (the handler's {@code countErrors}). */
    @Override
    public void count(short errorCode) {
        recordError(Errors.forCode(errorCode));
    }

    /** A handler has taken the request (on its request-handler thread or the event loop). */
    void dequeued() {
        dequeueNanos = time.nanoseconds();
    }

    /** The handler has returned (its local work is done; what remains waits for the purgatory). */
    void localDone() {
        localDoneNanos = time.nanoseconds();
    }

    /** How long the handler worked on the request on its thread (Kafka's {@code requestThreadTimeNanos}). */
    long localTimeNanos() {
        return localDoneNanos - dequeueNanos;
    }

    /** The response (or the failure) is complete. */
    void responseDone() {
        responseDoneNanos = time.nanoseconds();
    }

    /** The event loop has taken the response. */
    void responseDequeued() {
        responseDequeueNanos = time.nanoseconds();
    }

    /** The encoded size of the response, size prefix included. */
    void responseBytes(int bytes) {
        responseBytes = bytes;
    }

    /** Logs the request, described so, to the request logger when it completes (call only when it is enabled). */
    void describe(String requestDescription) {
        description = requestDescription;
    }

    /** The client quotas throttled the response by {@code ms} (recorded as Kafka's {@code ThrottleTimeMs}). */
    void throttled(int ms) {
        throttleTimeMs = ms;
    }

    /** The request had no response to write (acks=0): its meters are recorded now. */
    void finishWithoutResponse() {
        record(responseDequeueNanos);
    }

    @Override
    public void operationComplete(ChannelFuture future) {
        record(time.nanoseconds());
    }

    private void record(long sendDoneNanos) {
        api.recordTimes(startNanos, dequeueNanos, localDoneNanos, responseDoneNanos, responseDequeueNanos,
                sendDoneNanos, throttleTimeMs);
        api.recordSizes(requestBytes, responseBytes);
        if (split != null) {
            split.recordTimes(startNanos, dequeueNanos, localDoneNanos, responseDoneNanos, responseDequeueNanos,
                    sendDoneNanos, throttleTimeMs);
            split.recordSizes(requestBytes, responseBytes);
        }
        if (description != null) {
            REQUEST_LOGGER.debug("Completed request:{};totalTime:{},requestQueueTime:{},localTime:{},remoteTime:{},"
                    + "throttleTime:{},responseQueueTime:{},sendTime:{},requestBytes:{},responseBytes:{}", description,
                    ms(sendDoneNanos - startNanos), ms(dequeueNanos - startNanos), ms(localDoneNanos - dequeueNanos),
                    ms(responseDoneNanos - localDoneNanos), throttleTimeMs,
                    ms(responseDequeueNanos - responseDoneNanos),
                    ms(sendDoneNanos - responseDequeueNanos), requestBytes, responseBytes);
        }
    }

    private static double ms(long nanos) {
        return nanos / 1_000_000.0;
    }
}
