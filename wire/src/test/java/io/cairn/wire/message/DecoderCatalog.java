package io.cairn.wire.message;

import io.cairn.wire.error.UnsupportedVersionException;
import io.cairn.wire.protocol.ByteBufAccessor;
import io.cairn.wire.protocol.Message;
import io.cairn.wire.protocol.MessageDecodeException;
import io.cairn.wire.protocol.WireReader;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.ArrayList;
import java.util.List;

/**
 * Every generated decoder the wire module exposes: each API's request and response at each version, the request
 * header (v0 included) and response header, and the data schemas. Immutable; thread-safe.
 */
final class DecoderCatalog {

    /** One (message class, version) decoder. */
    record Decoder(Class<? extends Message> type, short version, MethodHandle constructor) {

        /**
         * Decodes {@code bytes}; returns normally or throws only {@link MessageDecodeException} or
         * {@link UnsupportedVersionException} — anything else is a bug and propagates as is. Buffers are released.
         */
        void decodeAndReencode(byte[] bytes) throws Throwable {
            ByteBuf input = PooledByteBufAllocator.DEFAULT.buffer(bytes.length);
            Message decoded = null;
            try {
                input.writeBytes(bytes);
                decoded = (Message) constructor.invoke(new ByteBufAccessor(input), version);
                // Whatever decodes must encode again (the server re-encodes what it forwards or echoes).
                KafkaDifferentialCodecTest.cairnEncode(decoded, version);
            } catch (MessageDecodeException | UnsupportedVersionException expected) {
                // The only two ways a decoder may reject input.
            } finally {
                MessageBuffers.releaseAll(decoded);
                // Every records slice handed out was released (by us, or by the decoder when it failed).
                int refCnt = input.refCnt();
                input.release(refCnt);
                if (refCnt != 1) {
                    throw new AssertionError(this + " leaked " + (refCnt - 1) + " records slice(s)");
                }
            }
        }

        @Override
        public String toString() {
            return type.getSimpleName() + " v" + version;
        }
    }

    private DecoderCatalog() {
    }

    static List<Decoder> all(SchemaCatalog catalog) {
        List<Decoder> decoders = new ArrayList<>();
        for (ApiKey key : ApiKey.values()) {
            for (short v = key.lowestSupportedVersion(); v <= key.highestSupportedVersion(); v++) {
                decoders.add(decoder(key.newRequest().getClass(), v));
                decoders.add(decoder(key.newResponse().getClass(), v));
            }
        }
        for (short v = 0; v <= RequestHeaderData.HIGHEST_SUPPORTED_VERSION; v++) {
            decoders.add(decoder(RequestHeaderData.class, v));
        }
        for (short v = ResponseHeaderData.LOWEST_SUPPORTED_VERSION; v <= ResponseHeaderData.HIGHEST_SUPPORTED_VERSION;
                v++) {
            decoders.add(decoder(ResponseHeaderData.class, v));
        }
        for (SchemaCatalog.MessageSchema schema : catalog.all().values()) {
            if (schema.type().equals("data")) {
                Class<? extends Message> type = messageClass(schema.className());
                for (int v = schema.validVersions().lowest(); v <= schema.validVersions().highest(); v++) {
                    decoders.add(decoder(type, (short) v));
                }
            }
        }
        return List.copyOf(decoders);
    }

    private static Decoder decoder(Class<? extends Message> type, short version) {
        try {
            MethodHandle constructor = MethodHandles.publicLookup().findConstructor(type,
                    MethodType.methodType(void.class, WireReader.class, short.class));
            return new Decoder(type, version, constructor);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Class<? extends Message> messageClass(String simpleName) {
        try {
            return Class.forName("io.cairn.wire.message." + simpleName).asSubclass(Message.class);
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(e);
        }
    }
}
