package io.cairn.broker.handler;

import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.RequestHeaderData;

/**
 * Everything about one request that is not its body: the decoded header and the connection it came on.
 *
 * <p>Immutable apart from the shared {@link ClientConnection}; thread-safe. The header object must not be modified.
 *
 * @param header the decoded request header
 * @param apiKey the API of the request
 * @param connection the client connection the request arrived on
 */
public record RequestContext(RequestHeaderData header, ApiKey apiKey, ClientConnection connection) {

    public short apiVersion() {
        return header.requestApiVersion();
    }

    public int correlationId() {
        return header.correlationId();
    }

    /** The client id of the header, or null (v0 headers and null client ids carry none). */
    public String clientId() {
        return header.clientId();
    }

    public String listenerName() {
        return connection.listenerName();
    }

    public ClientConnection.ClientSoftware clientSoftware() {
        return connection.clientSoftware();
    }
}
