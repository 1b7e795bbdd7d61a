package io.cairn.wire.record;

import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.xxhash.XXHash32;
import net.jpountz.xxhash.XXHashFactory;

import java.io.IOException;
import java.io.OutputStream;

/**
 * Writes the LZ4 frame that Kafka writes for magic-2 batches, so the bytes are the ones a Java producer would send.
 *
 * <pre>
 * magic            4 bytes LE  0x184D2204
 * FLG              1 byte      0x60: version 01, independent blocks, no block/content checksum, no content size
 * BD               1 byte      0x40: 64 KiB maximum block size
 * HC               1 byte      (xxHash32(FLG, BD, seed 0) &gt;&gt; 8) &amp; 0xFF
 * blocks           [size 4 bytes LE (bit 31 set = stored uncompressed), data]
 * end mark         4 bytes     0
 * </pre>
 *
 * A block that does not shrink is stored uncompressed. Level 9 (Kafka's default) uses LZ4's fast compressor, any
 * other level the high-compression one, as Kafka does. Not thread-safe; one stream per batch.
 */
final class Lz4FrameOutputStream extends OutputStream {

    static final int MAGIC = 0x184D2204;
    static final int INCOMPRESSIBLE_MASK = 0x80000000;
    static final int FLG_DEFAULT = 0x60;
    static final int BD_64KB = 4 << 4;
    static final int MAX_BLOCK_SIZE = 64 * 1024;

    private static final XXHash32 XXHASH = XXHashFactory.fastestInstance().hash32();

    private final OutputStream out;
    private final LZ4Compressor compressor;
    private final byte[] buffer = new byte[MAX_BLOCK_SIZE];
    private final byte[] compressed;
    private int buffered;
    private boolean closed;

    Lz4FrameOutputStream(OutputStream out, int level) throws IOException {
        this.out = out;
        LZ4Factory factory = LZ4Factory.fastestInstance();
        this.compressor = level == CompressionType.LZ4.defaultLevel()
                ? factory.fastCompressor()
                : factory.highCompressor(level);
        this.compressed = new byte[compressor.maxCompressedLength(MAX_BLOCK_SIZE)];
        writeHeader();
    }

    private void writeHeader() throws IOException {
        byte[] header = new byte[7];
        writeIntLe(header, 0, MAGIC);
        header[4] = (byte) FLG_DEFAULT;
        header[5] = (byte) BD_64KB;
        header[6] = descriptorChecksum(header, 4, 2);
        out.write(header);
    }

    static byte descriptorChecksum(byte[] bytes, int offset, int length) {
        return (byte) ((XXHASH.hash(bytes, offset, length, 0) >> 8) & 0xFF);
    }

    @Override
    public void write(int b) throws IOException {
        ensureOpen();
        if (buffered == MAX_BLOCK_SIZE) {
            writeBlock();
        }
        buffer[buffered++] = (byte) b;
    }

    @Override
    public void write(byte[] bytes, int offset, int length) throws IOException {
        ensureOpen();
        int off = offset;
        int remaining = length;
        while (remaining > 0) {
            if (buffered == MAX_BLOCK_SIZE) {
                writeBlock();
            }
            int n = Math.min(remaining, MAX_BLOCK_SIZE - buffered);
            System.arraycopy(bytes, off, buffer, buffered, n);
            buffered += n;
            off += n;
            remaining -= n;
        }
    }

    private void writeBlock() throws IOException {
        if (buffered == 0) {
            return;
        }
        int length = compressor.compress(buffer, 0, buffered, compressed, 0, compressed.length);
        byte[] sizeBytes = new byte[4];
        if (length >= buffered) {
            writeIntLe(sizeBytes, 0, buffered | INCOMPRESSIBLE_MASK);
            out.write(sizeBytes);
            out.write(buffer, 0, buffered);
        } else {
            writeIntLe(sizeBytes, 0, length);
            out.write(sizeBytes);
            out.write(compressed, 0, length);
        }
        buffered = 0;
    }

    @Override
    public void flush() throws IOException {
        if (!closed) {
            writeBlock();
        }
        out.flush();
    }

    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        try {
            writeBlock();
            out.write(new byte[4]); // end mark
            out.flush();
        } finally {
            closed = true;
            out.close();
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("The stream is already closed");
        }
    }

    static void writeIntLe(byte[] bytes, int offset, int value) {
        bytes[offset] = (byte) value;
        bytes[offset + 1] = (byte) (value >>> 8);
        bytes[offset + 2] = (byte) (value >>> 16);
        bytes[offset + 3] = (byte) (value >>> 24);
    }
}
