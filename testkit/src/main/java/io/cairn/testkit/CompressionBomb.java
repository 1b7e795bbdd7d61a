package io.cairn.testkit;

import com.github.luben.zstd.ZstdOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;
import java.util.zip.GZIPOutputStream;

/**
 * Builds a v2 record batch of one record whose value is {@code valueBytes} zero bytes, compressed as it is written
 * (gzip or zstd), so the batch is small on the wire and in the test's heap while its records expand to any size:
 * a decompression bomb, with a valid CRC and header. Stateless and thread-safe.
 */
public final class CompressionBomb {

    /** Attribute ids of the codecs this class writes. */
    public static final int GZIP = 1;
    public static final int ZSTD = 4;

    private static final int HEADER = 61;
    private static final int CHUNK = 1 << 20;

    private CompressionBomb() {
    }

    /** The batch, base offset 0, without producer id; {@code key} may be null. */
    public static ByteBuffer batch(int codec, byte[] key, long valueBytes, long timestamp) {
        if (valueBytes > Integer.MAX_VALUE - 64) {
            throw new IllegalArgumentException("value too large for one record: " + valueBytes);
        }
        ByteArrayOutputStream compressed = new ByteArrayOutputStream();
        try (OutputStream out = open(codec, compressed)) {
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            head.write(0); // attributes
            writeVarlong(head, 0); // timestamp delta
            writeVarint(head, 0); // offset delta
            if (key == null) {
                writeVarint(head, -1);
            } else {
                writeVarint(head, key.length);
                head.write(key);
            }
            writeVarint(head, (int) valueBytes);
            int bodySize = head.size() + (int) valueBytes + 1;
            ByteArrayOutputStream length = new ByteArrayOutputStream();
            writeVarint(length, bodySize);
            out.write(length.toByteArray());
            out.write(head.toByteArray());
            byte[] zeros = new byte[CHUNK];
            for (long left = valueBytes; left > 0; left -= CHUNK) {
                out.write(zeros, 0, (int) Math.min(CHUNK, left));
            }
            writeVarint(out, 0); // header count
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        byte[] payload = compressed.toByteArray();
        ByteBuffer batch = ByteBuffer.allocate(HEADER + payload.length);
        batch.putLong(0L).putInt(HEADER - 12 + payload.length).putInt(-1).put((byte) 2).putInt(0)
            .putShort((short) codec).putInt(0).putLong(timestamp).putLong(timestamp).putLong(-1L).putShort((short) -1)
            .putInt(-1).putInt(1).put(payload).flip();
        CRC32C crc = new CRC32C();
        crc.update(batch.array(), 21, batch.limit() - 21);
        batch.putInt(17, (int) crc.getValue());
        return batch;
    }

    private static OutputStream open(int codec, OutputStream out) throws IOException {
        if (codec == GZIP) {
            return new GZIPOutputStream(out, 64 * 1024);
        }
        if (codec == ZSTD) {
            return new ZstdOutputStream(out, 3);
        }
        throw new IllegalArgumentException("codec " + codec);
    }

    private static void writeVarint(OutputStream out, int value) throws IOException {
        writeVarlong(out, value);
    }

    private static void writeVarlong(OutputStream out, long value) throws IOException {
        long raw = (value << 1) ^ (value >> 63);
        while ((raw & ~0x7fL) != 0) {
            out.write((int) ((raw & 0x7f) | 0x80));
            raw >>>= 7;
        }
        out.write((int) raw);
    }
}
