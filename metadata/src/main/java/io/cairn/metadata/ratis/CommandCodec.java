package io.cairn.metadata.ratis;

import io.cairn.wire.error.ApiException;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.ByteBufAccessor;
import io.cairn.wire.protocol.MessageDecodeException;
import io.cairn.wire.protocol.SerializationCache;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

/**
 * Encodes controller requests and responses carried by Ratis read-only queries to the leader:
 * {@code int16 apiKey, int16 version, message}; a failure is {@code int16 -1, int16 errorCode, utf-8 message}.
 * Stateless, thread-safe.
 */
final class CommandCodec {

    private CommandCodec() {
    }

    static Message encode(ApiMessage message) {
        short version = message.highestSupportedVersion();
        SerializationCache cache = new SerializationCache();
        int size = message.size(cache, version);
        ByteBuf buf = Unpooled.buffer(4 + size);
        try {
            ByteBufAccessor out = new ByteBufAccessor(buf);
            out.writeShort(message.apiKey());
            out.writeShort(version);
            message.write(out, cache, version);
            return Message.valueOf(ByteString.copyFrom(buf.nioBuffer()));
        } finally {
            buf.release();
        }
    }

    static Message encodeError(Errors error, String text) {
        byte[] bytes = (text == null ? "" : text).getBytes(StandardCharsets.UTF_8);
        ByteBuf buf = Unpooled.buffer(4 + bytes.length);
        try {
            buf.writeShort(-1).writeShort(error.code()).writeBytes(bytes);
            return Message.valueOf(ByteString.copyFrom(buf.nioBuffer()));
        } finally {
            buf.release();
        }
    }

    /** Decodes a request (or a response when {@code response}); throws the carried ApiException on a failure. */
    static ApiMessage decode(Message message, boolean response) {
        ByteBuf buf = Unpooled.wrappedBuffer(message.getContent().asReadOnlyByteBuffer());
        try {
            ByteBufAccessor in = new ByteBufAccessor(buf);
            short key = in.readShort();
            short second = in.readShort();
            if (key == -1) {
                byte[] text = new byte[buf.readableBytes()];
                buf.readBytes(text);
                throw Errors.forCode(second).exception(new String(text, StandardCharsets.UTF_8));
            }
            ApiKey apiKey = ApiKey.forId(key);
            if (apiKey == null) {
                throw new MessageDecodeException("Unknown API key " + key);
            }
            ApiMessage decoded = response ? apiKey.newResponse() : apiKey.newRequest();
            decoded.read(in, second);
            return decoded;
        } finally {
            buf.release();
        }
    }

    /** The ApiException a failed command carries, or one that maps the failure to a Kafka error. */
    static ApiException toApiException(Throwable failure) {
        Throwable cause = failure;
        while (cause != null) {
            if (cause instanceof ApiException api) {
                return api;
            }
            cause = cause.getCause();
        }
        return Errors.NOT_CONTROLLER.exception("No active controller took the request: " + failure);
    }
}
