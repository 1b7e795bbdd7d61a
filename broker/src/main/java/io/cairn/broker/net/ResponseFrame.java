package io.cairn.broker.net;

import io.cairn.wire.protocol.ApiMessage;

/**
 * One response on its way to the socket: the position of its request on the connection, the header fields and the
 * body with the versions to write them at. A frame with a null body stands for a request that gets no response
 * (produce with acks=0): it only advances the {@link ResponseOrderer}.
 *
 * <p>Immutable holder; the body is owned by whoever holds the frame and must not be changed after it is written.
 *
 * @param sequence the index of the request on its connection, from 0
 * @param correlationId the request's correlation id
 * @param headerVersion the response header version (0 for ApiVersions, KIP-511)
 * @param apiVersion the version to write the body at
 * @param body the response body, or null for "no response"
 */
record ResponseFrame(long sequence, int correlationId, short headerVersion, short apiVersion, ApiMessage body) {

    static ResponseFrame none(long sequence) {
        return new ResponseFrame(sequence, -1, (short) 0, (short) 0, null);
    }

    boolean hasResponse() {
        return body != null;
    }
}
