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
import java.util.UUID;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

/**
 * Encodes controller requests and responses carried by Ratis read-only queries to the leader, and the log entries
 * of commands. A response is {@code int16 apiKey, int16 version, message}; a failure is
 * {@code int16 -1, int16 errorCode, utf-8 message}; a request is {@code uuid requestId} (two int64, the same for
 * every retry of one command) followed by the message as a response is. A log entry is either a plain record batch
 * ({@link io.cairn.metadata.image.MetadataRecords}, starting with a non-negative int32 count) or, for a command,
 * {@code int32 -1, uuid requestId, int32 responseSize, response, record batch}. Stateless, thread-safe.
 */
final class CommandCodec {

    private static final int COMMAND_ENTRY_MARKER = -1;

    /** A decoded command: the request and the id its sender keeps across retries. */
    record Command(UUID requestId, ApiMessage request) {
    }

    /** A decoded log entry: the records and, for a command, its request id and response (else null). */
    record Entry(UUID requestId, ApiMessage response, byte[] records) {
    }

    private CommandCodec() {
    }

    static Message encodeCommand(UUID requestId, ApiMessage request) {
        byte[] message = encode(request).getContent().toByteArray();
        ByteBuf buf = Unpooled.buffer(16 + message.length);
        try {
            buf.writeLong(requestId.getMostSignificantBits()).writeLong(requestId.getLeastSignificantBits())
                    .writeBytes(message);
            return Message.valueOf(ByteString.copyFrom(buf.nioBuffer()));
        } finally {
            buf.release();
        }
    }

    static Command decodeCommand(Message message) {
        ByteString content = message.getContent();
        if (content.size() < 16) {
            throw new MessageDecodeException("A controller command needs a request id");
        }
        java.nio.ByteBuffer bytes = content.asReadOnlyByteBuffer();
        UUID id = new UUID(bytes.getLong(), bytes.getLong());
        return new Command(id, decode(Message.valueOf(content.substring(16)), false));
    }

    /** The log entry of a command: its request id and response, then its records (already encoded). */
    static byte[] encodeEntry(UUID requestId, ApiMessage response, byte[] records) {
        byte[] encoded = encode(response).getContent().toByteArray();
        ByteBuf buf = Unpooled.buffer(24 + encoded.length + records.length);
        try {
            buf.writeInt(COMMAND_ENTRY_MARKER).writeLong(requestId.getMostSignificantBits())
                    .writeLong(requestId.getLeastSignificantBits()).writeInt(encoded.length).writeBytes(encoded)
                    .writeBytes(records);
            byte[] out = new byte[buf.readableBytes()];
            buf.readBytes(out);
            return out;
        } finally {
            buf.release();
        }
    }

    static Entry decodeEntry(byte[] data) {
        ByteBuf buf = Unpooled.wrappedBuffer(data);
        try {
            if (buf.readableBytes() < 4 || buf.getInt(0) != COMMAND_ENTRY_MARKER) {
                return new Entry(null, null, data);
            }
            buf.skipBytes(4);
            UUID id = new UUID(buf.readLong(), buf.readLong());
            int size = buf.readInt();
            byte[] response = new byte[size];
            buf.readBytes(response);
            byte[] records = new byte[buf.readableBytes()];
            buf.readBytes(records);
            return new Entry(id, decode(Message.valueOf(ByteString.copyFrom(response)), true), records);
        } finally {
            buf.release();
        }
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
