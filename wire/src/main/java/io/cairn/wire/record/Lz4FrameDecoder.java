package io.cairn.wire.record;

import io.cairn.wire.error.CorruptRecordException;
import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;
import net.jpountz.xxhash.XXHash32;
import net.jpountz.xxhash.XXHashFactory;

import io.netty.buffer.ByteBuf;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Decodes an LZ4 frame (the layout {@link Lz4FrameOutputStream} documents) into a bounded {@link ByteBuf}. Reads
 * what Kafka's reader accepts: independent blocks of 64 KiB to 4 MiB, optional content size (skipped), optional
 * block checksums (verified), optional content checksum (verified, xxHash32 of the whole content as the LZ4 frame
 * format defines it). Every size is checked against the input that is there and the output limit before use.
 * Stateless and thread-safe.
 */
final class Lz4FrameDecoder {

    private static final LZ4SafeDecompressor DECOMPRESSOR = LZ4Factory.fastestInstance().safeDecompressor();
    private static final XXHash32 XXHASH = XXHashFactory.fastestInstance().hash32();

    private Lz4FrameDecoder() {
    }

    /** Decompresses all of {@code source} (its readable bytes) and appends the content to {@code sink}. */
    static void decode(ByteBuf source, BoundedSink sink) {
        ByteBuffer in = source.nioBuffer().order(ByteOrder.LITTLE_ENDIAN);
        int contentStart = sink.size();
        if (in.remaining() < 7) {
            throw corrupt("Stream ended prematurely");
        }
        if (in.getInt() != Lz4FrameOutputStream.MAGIC) {
            throw corrupt("Stream unsupported (invalid magic bytes)");
        }
        int descriptorStart = in.position();
        int flg = in.get() & 0xFF;
        int bd = in.get() & 0xFF;
        int version = (flg >>> 6) & 3;
        if ((flg & 3) != 0 || version != 1 || ((flg >>> 5) & 1) != 1) {
            throw corrupt("Unsupported LZ4 frame descriptor flags 0x" + Integer.toHexString(flg));
        }
        int blockSizeCode = (bd >>> 4) & 7;
        if ((bd & 0x8F) != 0 || blockSizeCode < 4) {
            throw corrupt("Unsupported LZ4 block descriptor 0x" + Integer.toHexString(bd));
        }
        int maxBlockSize = 1 << (2 * blockSizeCode + 8);
        boolean blockChecksum = ((flg >>> 4) & 1) == 1;
        boolean contentSize = ((flg >>> 3) & 1) == 1;
        boolean contentChecksum = ((flg >>> 2) & 1) == 1;
        if (contentSize) {
            need(in, 8);
            in.position(in.position() + 8);
        }
        need(in, 1);
        int descriptorLength = in.position() - descriptorStart;
        byte expected = (byte) ((XXHASH.hash(in, descriptorStart, descriptorLength, 0) >> 8) & 0xFF);
        if (in.get() != expected) {
            throw corrupt("Stream frame descriptor corrupted");
        }
        while (true) {
            need(in, 4);
            int rawSize = in.getInt();
            boolean stored = (rawSize & Lz4FrameOutputStream.INCOMPRESSIBLE_MASK) != 0;
            int blockSize = rawSize & ~Lz4FrameOutputStream.INCOMPRESSIBLE_MASK;
            if (blockSize == 0) {
                break;
            }
            if (blockSize > maxBlockSize) {
                throw corrupt(String.format("Block size %d exceeded max: %d", blockSize, maxBlockSize));
            }
            need(in, blockSize + (blockChecksum ? 4 : 0));
            int blockStart = in.position();
            if (stored) {
                sink.write(in, blockStart, blockSize);
            } else {
                decompressBlock(in, blockStart, blockSize, maxBlockSize, sink);
            }
            in.position(blockStart + blockSize);
            if (blockChecksum && XXHASH.hash(in, blockStart, blockSize, 0) != in.getInt()) {
                throw corrupt("Block checksum mismatch");
            }
        }
        if (contentChecksum) {
            need(in, 4);
            if (sink.hash(contentStart, XXHASH) != in.getInt()) {
                throw corrupt("Content checksum mismatch");
            }
        }
    }

    private static void decompressBlock(ByteBuffer in, int start, int size, int maxBlockSize, BoundedSink sink) {
        ByteBuffer target = sink.reserve(maxBlockSize);
        int limit = target.remaining();
        try {
            int written = DECOMPRESSOR.decompress(in, start, size, target, target.position(), limit);
            sink.commit(written);
        } catch (LZ4Exception e) {
            if (limit < maxBlockSize) {
                throw sink.limitExceeded();
            }
            throw new CorruptRecordException("Failed to decompress record batch (lz4): " + e.getMessage(), e);
        }
    }

    private static void need(ByteBuffer in, int bytes) {
        if (in.remaining() < bytes) {
            throw corrupt("Stream ended prematurely");
        }
    }

    private static CorruptRecordException corrupt(String reason) {
        return new CorruptRecordException("Failed to decompress record batch (lz4): " + reason);
    }
}
