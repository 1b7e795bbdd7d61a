package io.cairn.broker.handler;

import io.cairn.wire.protocol.ApiMessage;
import java.util.concurrent.CompletionStage;

/**
 * A handler whose requests are accepted before they are answered (Redpanda's {@code two_phase_handler}): Produce
 * completes {@code dispatched} once its batches are appended in partition order, and {@code response} only after
 * the acks the request asked for. The dispatcher reads the connection's next request as soon as {@code dispatched}
 * completes, so a slow acks=all produce overlaps with the next request without reordering anything; the responses
 * still go out in request order.
 *
 * <p>Same contract as {@link ApiHandler}: stateless, thread-safe, non-blocking.
 *
 * @param <Q> the request body type
 * @param <S> the response body type
 */
public interface TwoPhaseApiHandler<Q extends ApiMessage, S extends ApiMessage> extends ApiHandler<Q, S> {

    /** Starts serving {@code request}; see {@link Stages}. */
    Stages<S> dispatch(RequestContext ctx, Q request);

    /** The single-stage view: the response stage of {@link #dispatch}. */
    @Override
    default CompletionStage<S> handle(RequestContext ctx, Q request) {
        return dispatch(ctx, request).response();
    }

    /**
     * The two stages of one request.
     *
     * @param dispatched completes (normally or not) when the connection may dispatch its next request
     * @param response completes with the response body, or exceptionally for a whole-request failure
     * @param <S> the response body type
     */
    record Stages<S>(CompletionStage<?> dispatched, CompletionStage<S> response) {
    }
}
