package io.cairn.broker.handler;

import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.protocol.ApiMessage;
import java.util.concurrent.CompletionStage;

/**
 * Serves one Kafka API: the dispatcher decodes the request, checks the version against {@link #minVersion()} and
 * {@link #maxVersion()}, calls {@link #handle} and writes the response in request order.
 *
 * <p>Implementations are stateless and thread-safe. Where {@link #handle} runs is the handler's own declaration,
 * {@link #runsOn()}: on a request-handler thread (the default) it may read files, open logs and take a partition's
 * lock; on the network thread it must do none of that, nor wait for anything. A handler does not catch exceptions: a
 * stage that completes exceptionally (or a {@code handle} that throws) is mapped by the dispatcher with
 * {@code Errors.forException} to {@link #errorResponse}.
 *
 * @param <Q> the request body type
 * @param <S> the response body type
 */
public interface ApiHandler<Q extends ApiMessage, S extends ApiMessage> {

    ApiKey apiKey();

    /** The lowest version served; ApiVersions advertises it and the dispatcher rejects anything lower. */
    short minVersion();

    /** The highest version served; ApiVersions advertises it and the dispatcher rejects anything higher. */
    short maxVersion();

    /**
     * The lowest version ApiVersions advertises: {@link #minVersion()}, except where Kafka advertises versions it no
     * longer serves. Kafka 4.x advertises Produce from v0 although it serves v3+ (KAFKA-18659: librdkafka refuses to
     * compress otherwise) and closes the connection of a real v0-v2 request, as the dispatcher does for anything below
     * {@link #minVersion()}.
     */
    default short advertisedMinVersion() {
        return minVersion();
    }

    /**
     * The threads that call {@link #handle} (Kafka's split of {@code num.network.threads} and
     * {@code num.io.threads}): {@link RunsOn#REQUEST_HANDLER_THREAD} unless the handler answers from memory alone.
     */
    default RunsOn runsOn() {
        return RunsOn.REQUEST_HANDLER_THREAD;
    }

    /** Serves {@code request}; the stage completes with the response body at the request's version. */
    CompletionStage<S> handle(RequestContext ctx, Q request);

    /** The response for a request that failed as a whole with {@code error} (Kafka {@code getErrorResponse}). */
    S errorResponse(RequestContext ctx, Q request, Errors error);

    /**
     * Whether the client waits for a response to this request. Only produce with {@code acks=0} answers false: the
     * dispatcher then writes nothing, keeps the response order of the connection intact, and closes the connection
     * if the request fails (the only way to tell the client, as Kafka does).
     */
    default boolean expectsResponse(Q request) {
        return true;
    }

    /**
     * Passes each error code {@code response} carries to {@code counter}, as Kafka's {@code errorCounts} does for the
     * request error metrics (per partition where the response has partitions). By default one NONE: handlers whose
     * responses carry per-partition codes override it. Must not allocate (it runs for every response).
     */
    default void countErrors(S response, ErrorCounter counter) {
        counter.count((short) 0);
    }

    /**
     * Releases what {@code response} holds beyond the heap (Fetch: the file slices of its records). The network
     * layer calls it exactly once per response this handler produced: after writing it, or when it is dropped
     * because the connection closed first.
     */
    default void releaseResponse(S response) {
    }

    /** Where a handler's {@link #handle} is called. */
    enum RunsOn {
        /**
         * The connection's event loop, which decoded the request: only for handlers that answer from memory (the
         * ApiVersions table, the metadata image) and never block, read a file or take a partition's lock.
         */
        NETWORK_THREAD,
        /**
         * One of the broker's {@code num.io.threads} request-handler threads (Kafka's
         * {@code data-plane-kafka-request-handler-N}), so that a slow disk or a held partition lock delays this
         * request only, never the other connections of its event loop.
         */
        REQUEST_HANDLER_THREAD
    }
}
