package io.cairn.metadata.controller;

import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.EnvelopeRequestData;
import io.cairn.wire.message.RequestHeaderData;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.ByteBufAccessor;
import io.cairn.wire.protocol.MessageDecodeException;
import io.cairn.wire.protocol.SerializationCache;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;

/**
 * A controller command that needs who sent it to the broker (Kafka forwards these in an Envelope, KIP-590, whose
 * principal and request header the controller's request context takes): the delegation-token commands, and the topic
 * commands the controller mutation quota (KIP-599) counts per user and client id at the client's request version.
 * The broker wraps the Kafka request in an {@link EnvelopeRequestData} whose {@code requestData} is, as Kafka's, the
 * request header (api key, the client's version, correlation id 0, client id) followed by the body at that version,
 * and whose {@code requestPrincipal} is the principal as UTF-8 {@code type:name}; the controller answers with the
 * inner API's response. Stateless, thread-safe.
 *
 * @param request    the wrapped request
 * @param apiVersion the version the client sent it at
 * @param clientId   the client id of the client's request header, null when none was given
 * @param principal  the principal it acts for, {@code type:name}
 */
public record ForwardedRequest(ApiMessage request, short apiVersion, String clientId, String principal) {

    /** The envelope carrying {@code request} for {@code principal}, at the request's highest version. */
    public static EnvelopeRequestData wrap(ApiMessage request, String principal) {
        return wrap(request, request.highestSupportedVersion(), null, principal);
    }

    /** The envelope carrying {@code request}, as the client sent it at {@code apiVersion}, for {@code principal}. */
    public static EnvelopeRequestData wrap(ApiMessage request, short apiVersion, String clientId, String principal) {
        ApiKey key = ApiKey.forId(request.apiKey());
        short headerVersion = key.requestHeaderVersion(apiVersion);
        RequestHeaderData header = new RequestHeaderData().setRequestApiKey(request.apiKey())
                .setRequestApiVersion(apiVersion).setCorrelationId(0).setClientId(clientId);
        SerializationCache cache = new SerializationCache();
        int size = header.size(cache, headerVersion) + request.size(cache, apiVersion);
        ByteBuf buf = Unpooled.buffer(size);
        try {
            ByteBufAccessor out = new ByteBufAccessor(buf);
            header.write(out, cache, headerVersion);
            request.write(out, cache, apiVersion);
            byte[] bytes = new byte[buf.readableBytes()];
            buf.readBytes(bytes);
            return new EnvelopeRequestData().setRequestData(bytes)
                    .setRequestPrincipal(principal.getBytes(StandardCharsets.UTF_8)).setClientHostAddress(new byte[0]);
        } finally {
            buf.release();
        }
    }

    /** The request, version, client id and principal an envelope carries. */
    public static ForwardedRequest unwrap(EnvelopeRequestData envelope) {
        ByteBuf buf = Unpooled.wrappedBuffer(envelope.requestData());
        try {
            if (buf.readableBytes() < 4) {
                throw new MessageDecodeException("An envelope without a request header");
            }
            ApiKey key = ApiKey.forId(buf.getShort(0));
            if (key == null) {
                throw new MessageDecodeException("Unknown API key in an envelope");
            }
            short version = buf.getShort(2);
            ByteBufAccessor in = new ByteBufAccessor(buf);
            RequestHeaderData header = new RequestHeaderData(in, key.requestHeaderVersion(version));
            ApiMessage request = key.newRequest();
            request.read(in, version);
            String principal = envelope.requestPrincipal() == null ? ""
                    : new String(envelope.requestPrincipal(), StandardCharsets.UTF_8);
            return new ForwardedRequest(request, version, header.clientId(), principal);
        } finally {
            buf.release();
        }
    }

    /** The name of the principal ({@code alice} of {@code User:alice}), as Kafka's quotas name a user. */
    public String principalName() {
        int colon = principal.indexOf(':');
        return colon < 0 ? principal : principal.substring(colon + 1);
    }
}
