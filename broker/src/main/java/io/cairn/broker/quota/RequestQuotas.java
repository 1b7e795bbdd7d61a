package io.cairn.broker.quota;

import io.cairn.wire.message.ApiKey;
import io.cairn.wire.protocol.ApiMessage;

/**
 * What the network layer asks before it sends a response: the client quotas the request counts against, and how long
 * the client is throttled. Implementations are thread-safe (called by every network thread).
 */
public interface RequestQuotas {

    /** No quotas: every response as it is, never throttled. */
    RequestQuotas NONE = (apiKey, version, user, clientId, request, response, requestBytes, requestThreadNanos) ->
            new Throttled(response, 0);

    /**
     * The response to send (the one given, with its throttle time set, or one that replaces it; the caller releases a
     * replaced one) and the throttle time in ms for which the connection must stop reading after sending it.
     */
    record Throttled(ApiMessage response, int throttleTimeMs) {
    }

    /**
     * Counts an answered request against its client's quotas.
     *
     * @param user         the principal's name
     * @param clientId     the client id of the request header (null read as "")
     * @param response     the handler's response, or null when the request gets none (acks=0 produce)
     * @param requestBytes the size of the request frame (header and body)
     * @param requestThreadNanos how long the handler worked on the request on its thread
     */
    Throttled apply(ApiKey apiKey, short version, String user, String clientId, ApiMessage request,
                    ApiMessage response, int requestBytes, long requestThreadNanos);

    /**
     * The most bytes a consumer fetch of the client may return, so that one response never exceeds what its quota
     * allows in a window (Kafka caps {@code max_bytes} so); {@link Integer#MAX_VALUE} without a quota.
     */
    default int fetchMaxBytes(String user, String clientId) {
        return Integer.MAX_VALUE;
    }
}
