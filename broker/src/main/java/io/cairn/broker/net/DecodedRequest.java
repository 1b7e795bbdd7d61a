package io.cairn.broker.net;

import io.cairn.broker.handler.ApiHandler;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.RequestHeaderData;
import io.cairn.wire.protocol.ApiMessage;

/**
 * A request frame decoded into its header, its handler and its body.
 *
 * <p>Immutable holder, used on one event loop.
 *
 * @param header the request header
 * @param apiKey the API
 * @param handler the handler registered for it on this listener
 * @param body the decoded body, or null for an ApiVersions request newer than ours (KIP-511: not parsed)
 */
record DecodedRequest(RequestHeaderData header, ApiKey apiKey, ApiHandler<ApiMessage, ApiMessage> handler,
        ApiMessage body) {

    short apiVersion() {
        return header.requestApiVersion();
    }

    boolean unsupportedApiVersions() {
        return body == null;
    }
}
