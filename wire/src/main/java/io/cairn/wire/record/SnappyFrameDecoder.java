package io.cairn.wire.record;

import io.cairn.wire.error.CorruptRecordException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import org.xerial.snappy.Snappy;

import java.io.IOException;

/**
 * Decodes snappy-compressed batch payloads into a bounded sink: the xerial snappy-java stream Kafka's Java clients
 * write ({@code SnappyOutputStream}), and a bare snappy block, which some non-Java clients send and Kafka's reader
 * also accepts. The xerial stream is
 *
 * <pre>
 * header   8 bytes magic 0x82 'S' 'N' 'A' 'P' 'P' 'Y' 0x00, version int32 BE, compatible version int32 BE
 * chunks   [length int32 BE, snappy block]    (another header may appear between chunks: concatenated streams)
 * </pre>
 *
 * Unlike {@code SnappyInputStream} (which may allocate a chunk of up to 512 MiB from the length field), each chunk
 * length is checked against the bytes present and each uncompressed length against the sink's limit before any
 * allocation. Stateless and thread-safe.
 */
final class SnappyFrameDecoder {

    private static final byte[] MAGIC = {(byte) 0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
    private static final int HEADER_SIZE = MAGIC.length + 8;
    private static final int MIN_COMPATIBLE_VERSION = 1;

    private SnappyFrameDecoder() {
    }

    static void decode(ByteBuf source, BoundedSink sink) {
        byte[] in = ByteBufUtil.getBytes(source);
        try {
            if (!hasMagic(in, 0)) {
                uncompressBlock(in, 0, in.length, sink);
                return;
            }
            int position = 0;
            while (position < in.length) {
                if (hasMagic(in, position)) {
                    position = readHeader(in, position);
                    continue;
                }
                if (in.length - position < 4) {
                    throw corrupt("truncated chunk length");
                }
                int length = readInt(in, position);
                position += 4;
                if (length < 0 || length > in.length - position) {
                    throw corrupt("chunk length " + length + " with " + (in.length - position) + " bytes left");
                }
                uncompressBlock(in, position, length, sink);
                position += length;
            }
        } catch (IOException e) {
            throw new CorruptRecordException("Failed to decompress record batch (snappy): " + e.getMessage(), e);
        }
    }

    private static int readHeader(byte[] in, int position) {
        if (in.length - position < HEADER_SIZE) {
            throw corrupt("truncated stream header");
        }
        int compatibleVersion = readInt(in, position + MAGIC.length + 4);
        if (compatibleVersion < MIN_COMPATIBLE_VERSION) {
            throw corrupt("incompatible stream version " + compatibleVersion);
        }
        return position + HEADER_SIZE;
    }

    private static void uncompressBlock(byte[] in, int offset, int length, BoundedSink sink) throws IOException {
        if (length == 0) {
            return;
        }
        int uncompressedLength = Snappy.uncompressedLength(in, offset, length);
        sink.ensureRoom(uncompressedLength);
        int written = Snappy.uncompress(in, offset, length, sink.array(), sink.arrayWriteOffset());
        if (written != uncompressedLength) {
            throw corrupt("block decoded to " + written + " bytes, expected " + uncompressedLength);
        }
        sink.commit(written);
    }

    private static boolean hasMagic(byte[] in, int position) {
        if (in.length - position < MAGIC.length) {
            return false;
        }
        for (int i = 0; i < MAGIC.length; i++) {
            if (in[position + i] != MAGIC[i]) {
                return false;
            }
        }
        return true;
    }

    private static int readInt(byte[] in, int position) {
        return ((in[position] & 0xFF) << 24) | ((in[position + 1] & 0xFF) << 16) | ((in[position + 2] & 0xFF) << 8)
                | (in[position + 3] & 0xFF);
    }

    private static CorruptRecordException corrupt(String reason) {
        return new CorruptRecordException("Failed to decompress record batch (snappy): " + reason);
    }
}
