package io.cairn.broker.metrics;

import io.cairn.wire.error.Errors;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The meters of one {@code request} label value (an API, or Fetch's {@code FetchConsumer}/{@code FetchFollower}),
 * as Kafka's {@code RequestChannel} keeps them: request count per version, errors per code, the time of each phase
 * in milliseconds with quantiles, and the request and response sizes. Counters per version and per error code are
 * created on first use and kept in arrays, so recording is an array read and an increment.
 *
 * <p>Thread-safe.
 */
public final class ApiRequestMetrics {

    static final String PREFIX = "kafka.network.requestmetrics.";
    /** Kafka's version numbers stay far below this; a larger one is counted under the last slot's label. */
    private static final int MAX_VERSIONS = 64;

    private final MeterRegistry registry;
    private final MillisSummaries summaries;
    private final String request;
    private final AtomicReferenceArray<Counter> byVersion = new AtomicReferenceArray<>(MAX_VERSIONS);
    private final AtomicReferenceArray<Counter> byError;
    private final MillisSummary requestQueueTime;
    private final MillisSummary localTime;
    private final MillisSummary remoteTime;
    private final MillisSummary throttleTime;
    private final MillisSummary responseQueueTime;
    private final MillisSummary responseSendTime;
    private final MillisSummary totalTime;
    private final MillisSummary requestBytes;
    private final MillisSummary responseBytes;

    ApiRequestMetrics(MeterRegistry registry, MillisSummaries summaries, String request) {
        this.registry = registry;
        this.summaries = summaries;
        this.request = request;
        this.byError = new AtomicReferenceArray<>(maxErrorCode() + 2);
        this.requestQueueTime = summary("requestqueuetimems", "Milliseconds until a handler thread took the request");
        this.localTime = summary("localtimems", "Milliseconds the handler worked on the request");
        this.remoteTime = summary("remotetimems", "Milliseconds the request waited in the purgatory");
        this.throttleTime = summary("throttletimems", "Milliseconds the response was throttled by the client quotas");
        this.responseQueueTime = summary("responsequeuetimems",
                "Milliseconds the response waited for its network thread");
        this.responseSendTime = summary("responsesendtimems", "Milliseconds writing the response took");
        this.totalTime = summary("totaltimems", "Milliseconds from the request's dispatch to its response written");
        this.requestBytes = summary("requestbytes", "Request sizes in bytes");
        this.responseBytes = summary("responsebytes", "Response sizes in bytes");
    }

    private static int maxErrorCode() {
        int max = 0;
        for (Errors error : Errors.values()) {
            max = Math.max(max, error.code());
        }
        return max;
    }

    private MillisSummary summary(String name, String help) {
        return summaries.register(PREFIX + name, help, "request", request);
    }

    /** The {@code request} label value. */
    public String request() {
        return request;
    }

    /** Counts one request of {@code version} ({@code requests_total{request,version}}). */
    public void recordRequest(short version) {
        int slot = Math.min(Math.max(version, 0), MAX_VERSIONS - 1);
        Counter counter = byVersion.get(slot);
        if (counter == null) {
            counter = Counter.builder(PREFIX + "requests").description("Requests by API and version")
                    .tag("request", request)
                    .tag("version", Integer.toString(slot)).register(registry);
            byVersion.set(slot, counter);
        }
        counter.increment();
    }

    /** Counts one outcome ({@code errors_total{request,error}}; {@code error="NONE"} counts successes). */
    public void recordError(Errors error) {
        int slot = error.code() + 1;
        Counter counter = byError.get(slot);
        if (counter == null) {
            counter = Counter.builder(PREFIX + "errors").description("Error codes of the responses (NONE: success)")
                    .tag("request", request).tag("error", error.name())
                    .register(registry);
            byError.set(slot, counter);
        }
        counter.increment();
    }

    /**
     * Records the phases of one finished request from its nanosecond timestamps, Kafka's split: queue (arrival to a
     * handler taking it), local (the handler's own work), remote (waiting in the purgatory), response queue (the
     * response waiting for its network thread), send (writing it), total; and the throttle time the client quotas set
     * on the response (the connection stops reading for it after the send, so it is not part of the total).
     */
    public void recordTimes(long startNanos, long dequeueNanos, long localDoneNanos, long responseDoneNanos,
            long responseDequeueNanos, long sendDoneNanos, int throttleTimeMs) {
        requestQueueTime.record(ms(dequeueNanos - startNanos));
        localTime.record(ms(localDoneNanos - dequeueNanos));
        remoteTime.record(ms(responseDoneNanos - localDoneNanos));
        throttleTime.record(throttleTimeMs);
        responseQueueTime.record(ms(responseDequeueNanos - responseDoneNanos));
        responseSendTime.record(ms(sendDoneNanos - responseDequeueNanos));
        totalTime.record(ms(sendDoneNanos - startNanos));
    }

    /** Records the request's and the response's size in bytes (0 for a request without response). */
    public void recordSizes(int requestSize, int responseSize) {
        requestBytes.record(requestSize);
        responseBytes.record(responseSize);
    }

    private static double ms(long nanos) {
        return MillisSummaries.ms(nanos);
    }
}
