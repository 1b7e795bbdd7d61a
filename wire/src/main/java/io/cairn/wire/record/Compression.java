package io.cairn.wire.record;

import com.github.luben.zstd.RecyclingBufferPool;
import com.github.luben.zstd.ZstdInputStreamNoFinalizer;
import com.github.luben.zstd.ZstdOutputStreamNoFinalizer;
import io.cairn.wire.error.ApiException;
import io.cairn.wire.error.CorruptRecordException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufInputStream;
import org.xerial.snappy.SnappyOutputStream;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;

/**
 * The compression codecs of v2 batches, in the exact stream formats Kafka's Java client uses so either side reads
 * the other's batches: gzip ({@code java.util.zip} stream), snappy (xerial snappy-java framed stream), lz4 (Kafka's
 * LZ4 frame, {@link Lz4FrameOutputStream}), zstd (zstd-jni stream). Decompression goes into a {@link BoundedSink}
 * that caps the output size. Stateless and thread-safe; the streams it returns are not.
 */
final class Compression {

    /** Buffer sizes Kafka uses around its gzip and zstd streams (so the deflate/zstd input is chunked the same). */
    private static final int GZIP_BUFFER = 8 * 1024;
    private static final int OUTPUT_BUFFER = 16 * 1024;

    private Compression() {
    }

    /** Wraps {@code out} in a compressing stream; closing the returned stream finishes the frame and closes out. */
    static OutputStream wrapForOutput(CompressionType type, int level, OutputStream out) throws IOException {
        switch (type) {
            case NONE:
                return out;
            case GZIP:
                return new BufferedOutputStream(new LeveledGzipOutputStream(out, GZIP_BUFFER, level), OUTPUT_BUFFER);
            case SNAPPY:
                return new SnappyOutputStream(out);
            case LZ4:
                return new Lz4FrameOutputStream(out, level);
            case ZSTD:
                return new BufferedOutputStream(
                        new ZstdOutputStreamNoFinalizer(out, RecyclingBufferPool.INSTANCE, level), OUTPUT_BUFFER);
            default:
                throw new IllegalArgumentException("Unknown compression type " + type);
        }
    }

    /**
     * Decompresses the readable bytes of {@code source} (not consumed, not released) into a new heap buffer the
     * caller releases.
     *
     * @throws CorruptRecordException if the data is not a valid stream of {@code type} or would decompress to more
     *                                than {@code maxBytes}
     */
    static ByteBuf decompress(CompressionType type, ByteBuf source, ByteBufAllocator allocator, int maxBytes) {
        // Typical ratios are 2-5x; the sink grows past this only as real content arrives.
        int initialCapacity = (int) Math.min(Integer.MAX_VALUE - 8L, 4L * source.readableBytes() + 64);
        BoundedSink sink = new BoundedSink(allocator, initialCapacity, maxBytes);
        boolean success = false;
        try {
            switch (type) {
                case SNAPPY:
                    SnappyFrameDecoder.decode(source, sink);
                    break;
                case LZ4:
                    Lz4FrameDecoder.decode(source, sink);
                    break;
                case GZIP:
                case ZSTD:
                    try (InputStream in = wrapForInput(type, source)) {
                        sink.readFully(in);
                    }
                    break;
                default:
                    throw new IllegalArgumentException("Not a compressed type: " + type);
            }
            success = true;
            return sink.take();
        } catch (ApiException e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            throw new CorruptRecordException("Failed to decompress record batch (" + type.configName() + "): "
                    + e.getMessage(), e);
        } finally {
            if (!success) {
                sink.release();
            }
        }
    }

    private static InputStream wrapForInput(CompressionType type, ByteBuf source) throws IOException {
        InputStream raw = new ByteBufInputStream(source.duplicate());
        if (type == CompressionType.GZIP) {
            return new GZIPInputStream(raw, GZIP_BUFFER);
        }
        return new ZstdInputStreamNoFinalizer(raw, RecyclingBufferPool.INSTANCE);
    }

    /** A gzip stream with a deflate level, like Kafka's {@code GzipOutputStream}. */
    private static final class LeveledGzipOutputStream extends GZIPOutputStream {

        LeveledGzipOutputStream(OutputStream out, int size, int level) throws IOException {
            super(out, size);
            def.setLevel(level);
        }
    }
}
