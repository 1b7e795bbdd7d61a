package io.cairn.broker.net;

import io.cairn.broker.handler.ApiHandler;
import io.cairn.broker.handler.HandlerRegistry;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.RequestHeaderData;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.ByteBufAccessor;
import io.netty.buffer.ByteBuf;

/**
 * Decodes one request frame against a listener's {@link HandlerRegistry}, applying Kafka's acceptance rules in
 * Kafka's order ({@code SocketServer.parseRequestHeader}, {@code RequestContext.parseRequest}): the API key must be
 * known and served on the listener, the version must be in the served range (any version is accepted for
 * ApiVersions: one newer than ours is answered at v0, KIP-511), then the header and the body must decode.
 *
 * <p>Stateless apart from the immutable registry; thread-safe.
 */
final class RequestDecoder {

    private static final int KEY_AND_VERSION_BYTES = 4;

    private final HandlerRegistry registry;
    private final String listenerName;

    RequestDecoder(HandlerRegistry registry, String listenerName) {
        this.registry = registry;
        this.listenerName = listenerName;
    }

    HandlerRegistry registry() {
        return registry;
    }

    /** Decodes {@code frame} without releasing it; records fields of the body are retained slices. */
    @SuppressWarnings("unchecked")
    DecodedRequest decode(ByteBuf frame) throws InvalidRequestException {
        if (frame.readableBytes() < KEY_AND_VERSION_BYTES) {
            throw new InvalidRequestException("request of " + frame.readableBytes()
                    + " bytes is too short for a request header");
        }
        short keyId = frame.getShort(frame.readerIndex());
        short version = frame.getShort(frame.readerIndex() + 2);
        ApiKey apiKey = ApiKey.forId(keyId);
        if (apiKey == null) {
            throw new InvalidRequestException("unknown api key " + keyId + " (version " + version + ")");
        }
        ApiHandler<ApiMessage, ApiMessage> handler = (ApiHandler<ApiMessage, ApiMessage>) registry.handler(keyId);
        if (handler == null) {
            throw new InvalidRequestException("api " + apiKey.messageName() + " (key " + keyId + ", version "
                    + version + ") is not served on listener " + listenerName);
        }
        boolean outOfRange = version < handler.minVersion() || version > handler.maxVersion();
        if (outOfRange && apiKey != ApiKey.API_VERSIONS) {
            throw new InvalidRequestException("unsupported version " + version + " of api " + apiKey.messageName()
                    + " (key " + keyId + "; served versions " + handler.minVersion() + "-" + handler.maxVersion()
                    + ")");
        }
        // An ApiVersions version we do not know is read with the header of the nearest version we do know.
        short headerApiVersion = (short) Math.max(apiKey.lowestSupportedVersion(),
                Math.min(version, apiKey.highestSupportedVersion()));
        ByteBufAccessor in = new ByteBufAccessor(frame);
        RequestHeaderData header;
        try {
            header = new RequestHeaderData(in, apiKey.requestHeaderVersion(headerApiVersion));
        } catch (RuntimeException e) {
            throw new InvalidRequestException("cannot decode the request header of " + apiKey.messageName() + " v"
                    + version + ": " + e.getMessage());
        }
        if (outOfRange) {
            return new DecodedRequest(header, apiKey, handler, null);
        }
        ApiMessage body = apiKey.newRequest();
        try {
            body.read(in, version);
        } catch (RuntimeException e) {
            throw new InvalidRequestException("cannot decode " + apiKey.messageName() + " v" + version
                    + " request with correlation id " + header.correlationId() + ": " + e.getMessage());
        }
        return new DecodedRequest(header, apiKey, handler, body);
    }
}
