package io.cairn.metadata.controller;

import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.EnvelopeRequestData;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.ByteBufAccessor;
import io.cairn.wire.protocol.MessageDecodeException;
import io.cairn.wire.protocol.SerializationCache;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;

/**
 * A controller command that needs the principal of the client that sent it to the broker (Kafka forwards these in
 * an Envelope, KIP-590, whose principal the controller's request context takes): the delegation-token commands. The
 * broker wraps the Kafka request in an {@link EnvelopeRequestData} whose {@code requestData} is
 * {@code int16 apiKey, int16 version, body} (the request at its highest version) and whose {@code requestPrincipal}
 * is the principal as UTF-8 {@code type:name}; the controller answers with the inner API's response. Stateless,
 * thread-safe.
 *
 * @param request   the wrapped request
 * @param principal the principal it acts for, {@code type:name}
 */
public record ForwardedRequest(ApiMessage request, String principal) {

    /** The envelope carrying {@code request} for {@code principal}. */
    public static EnvelopeRequestData wrap(ApiMessage request, String principal) {
        short version = request.highestSupportedVersion();
        SerializationCache cache = new SerializationCache();
        int size = request.size(cache, version);
        ByteBuf buf = Unpooled.buffer(4 + size);
        try {
            ByteBufAccessor out = new ByteBufAccessor(buf);
            out.writeShort(request.apiKey());
            out.writeShort(version);
            request.write(out, cache, version);
            byte[] bytes = new byte[buf.readableBytes()];
            buf.readBytes(bytes);
            return new EnvelopeRequestData().setRequestData(bytes)
                    .setRequestPrincipal(principal.getBytes(StandardCharsets.UTF_8)).setClientHostAddress(new byte[0]);
        } finally {
            buf.release();
        }
    }

    /** The request and principal an envelope carries. */
    public static ForwardedRequest unwrap(EnvelopeRequestData envelope) {
        ByteBuf buf = Unpooled.wrappedBuffer(envelope.requestData());
        try {
            ByteBufAccessor in = new ByteBufAccessor(buf);
            ApiKey key = ApiKey.forId(in.readShort());
            short version = in.readShort();
            if (key == null) {
                throw new MessageDecodeException("Unknown API key in an envelope");
            }
            ApiMessage request = key.newRequest();
            request.read(in, version);
            String principal = envelope.requestPrincipal() == null ? ""
                    : new String(envelope.requestPrincipal(), StandardCharsets.UTF_8);
            return new ForwardedRequest(request, principal);
        } finally {
            buf.release();
        }
    }
}
