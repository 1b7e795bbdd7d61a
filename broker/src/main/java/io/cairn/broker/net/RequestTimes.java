package io.cairn.broker.net;

import io.cairn.broker.handler.ErrorCounter;
import io.cairn.broker.metrics.ApiRequestMetrics;
import io.cairn.log.Time;
import io.cairn.wire.error.Errors;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;

/**
 * The timestamps of one request on its way through the broker (Kafka keeps the same ones on its
 * {@code RequestChannel.Request}): dispatched, taken by a handler, handler returned, response complete, response
 * taken by the event loop, response written; on completion of the write they go to the request's meters.
 *
 * <p>Written by the threads the request passes through in turn; each hand-over goes through a future completion
 * or an executor hand-off, which orders the writes before the reads. Not otherwise thread-safe.
 */
final class RequestTimes implements ChannelFutureListener, ErrorCounter {

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
                sendDoneNanos);
        api.recordSizes(requestBytes, responseBytes);
        if (split != null) {
            split.recordTimes(startNanos, dequeueNanos, localDoneNanos, responseDoneNanos, responseDequeueNanos,
                    sendDoneNanos);
            split.recordSizes(requestBytes, responseBytes);
        }
    }
}
