package io.cairn.log.record;

import com.github.luben.zstd.ZstdInputStream;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPInputStream;
import net.jpountz.lz4.LZ4FrameInputStream;
import org.xerial.snappy.SnappyInputStream;

/**
 * Decodes the records of one v2 batch, decompressing the payload when the batch is compressed (gzip, snappy, lz4,
 * zstd, with Kafka's framings). The log calls it only where a rule needs records: compaction (keys), transaction
 * markers, timestamp lookups inside a batch, validation of uncompressed batches. Stateless and thread-safe.
 *
 * <p>Record layout (Kafka's {@code DefaultRecord}): length varint, attributes int8, timestampDelta varlong,
 * offsetDelta varint, keyLength varint (-1 = null), key, valueLength varint, value, headerCount varint, then per
 * header keyLength varint, key, valueLength varint, value.
 */
public final class BatchRecords {

    private BatchRecords() {
    }

    /**
     * All records of the batch that starts at {@code at} in {@code batch}.
     *
     * @throws InvalidBatchException when the payload cannot be decoded
     */
    public static List<LogRecord> decode(ByteBuffer batch, int at) {
        int size = BatchHeader.sizeInBytes(batch, at);
        int count = BatchHeader.recordsCount(batch, at);
        if (count < 0) {
            throw new InvalidBatchException("negative record count " + count);
        }
        ByteBuffer payload = batch.duplicate();
        payload.limit(at + size).position(at + BatchHeader.SIZE);
        payload = payload.slice();
        int codec = BatchHeader.compression(batch, at);
        if (codec != 0) {
            payload = decompress(codec, payload);
        }
        long baseOffset = BatchHeader.baseOffset(batch, at);
        long baseTimestamp = BatchHeader.baseTimestamp(batch, at);
        boolean logAppendTime = BatchHeader.isLogAppendTime(batch, at);
        long maxTimestamp = BatchHeader.maxTimestamp(batch, at);
        List<LogRecord> records = new ArrayList<>(Math.min(count, 4096));
        try {
            for (int i = 0; i < count; i++) {
                records.add(readRecord(payload, baseOffset, baseTimestamp, logAppendTime, maxTimestamp));
            }
        } catch (RuntimeException e) {
            throw new InvalidBatchException("cannot decode record in batch at offset " + baseOffset + ": " + e, e);
        }
        if (payload.hasRemaining()) {
            throw new InvalidBatchException(payload.remaining() + " bytes after the last record of batch at offset "
                + baseOffset);
        }
        return records;
    }

    /**
     * Checks, without decoding keys or values, that the records of an uncompressed batch carry offset deltas
     * 0, 1, 2, ... and fill the batch exactly (Kafka's per-record check on leader appends). Compressed batches are
     * not inspected here: their offsets are checked from the header only.
     *
     * @throws InvalidBatchException on a gap, a repeat or a malformed record
     */
    public static void checkOffsetDeltas(ByteBuffer batch, int at) {
        if (BatchHeader.compression(batch, at) != 0) {
            return;
        }
        int end = at + BatchHeader.sizeInBytes(batch, at);
        int count = BatchHeader.recordsCount(batch, at);
        ByteBuffer in = batch.duplicate();
        in.limit(end).position(at + BatchHeader.SIZE);
        try {
            for (int i = 0; i < count; i++) {
                int length = readVarint(in);
                if (length <= 0 || length > in.remaining()) {
                    throw new InvalidBatchException("record " + i + " has length " + length);
                }
                int next = in.position() + length;
                in.get();
                readVarlong(in);
                int offsetDelta = readVarint(in);
                if (offsetDelta != i) {
                    throw new InvalidBatchException("record " + i + " has offset delta " + offsetDelta);
                }
                in.position(next);
            }
        } catch (java.nio.BufferUnderflowException | IllegalArgumentException e) {
            throw new InvalidBatchException("malformed record in batch: " + e, e);
        }
        if (in.hasRemaining()) {
            throw new InvalidBatchException(in.remaining() + " bytes after the last record");
        }
    }

    private static LogRecord readRecord(ByteBuffer in, long baseOffset, long baseTimestamp, boolean logAppendTime,
                                        long maxTimestamp) {
        int length = readVarint(in);
        if (length < 0 || length > in.remaining()) {
            throw new InvalidBatchException("record length " + length + " exceeds the batch");
        }
        int end = in.position() + length;
        in.get();
        long timestampDelta = readVarlong(in);
        int offsetDelta = readVarint(in);
        ByteBuffer key = readBytes(in);
        ByteBuffer value = readBytes(in);
        int headers = readVarint(in);
        if (headers < 0) {
            throw new InvalidBatchException("negative header count");
        }
        for (int h = 0; h < headers; h++) {
            ByteBuffer headerKey = readBytes(in);
            if (headerKey == null) {
                throw new InvalidBatchException("null header key");
            }
            readBytes(in);
        }
        if (in.position() != end) {
            throw new InvalidBatchException("record length " + length + " does not match its content");
        }
        long timestamp = logAppendTime ? maxTimestamp : baseTimestamp + timestampDelta;
        return new LogRecord(baseOffset + offsetDelta, timestamp, key, value, headers);
    }

    private static ByteBuffer readBytes(ByteBuffer in) {
        int len = readVarint(in);
        if (len < 0) {
            return null;
        }
        if (len > in.remaining()) {
            throw new InvalidBatchException("field length " + len + " exceeds the record");
        }
        ByteBuffer out = in.slice();
        out.limit(len);
        in.position(in.position() + len);
        return out.asReadOnlyBuffer();
    }

    /** Reads a zig-zag varint. */
    public static int readVarint(ByteBuffer in) {
        int raw = 0;
        int shift = 0;
        byte b;
        do {
            if (shift > 28) {
                throw new InvalidBatchException("varint longer than 5 bytes");
            }
            b = in.get();
            raw |= (b & 0x7f) << shift;
            shift += 7;
        } while ((b & 0x80) != 0);
        return (raw >>> 1) ^ -(raw & 1);
    }

    /** Reads a zig-zag varlong. */
    public static long readVarlong(ByteBuffer in) {
        long raw = 0;
        int shift = 0;
        byte b;
        do {
            if (shift > 63) {
                throw new InvalidBatchException("varlong longer than 10 bytes");
            }
            b = in.get();
            raw |= (long) (b & 0x7f) << shift;
            shift += 7;
        } while ((b & 0x80) != 0);
        return (raw >>> 1) ^ -(raw & 1);
    }

    private static ByteBuffer decompress(int codec, ByteBuffer payload) {
        byte[] compressed = new byte[payload.remaining()];
        payload.get(compressed);
        try (InputStream in = open(codec, new ByteArrayInputStream(compressed))) {
            return ByteBuffer.wrap(in.readAllBytes());
        } catch (IOException | RuntimeException e) {
            throw new InvalidBatchException("cannot decompress batch with codec " + codec + ": " + e, e);
        }
    }

    private static InputStream open(int codec, InputStream in) throws IOException {
        return switch (codec) {
            case 1 -> new GZIPInputStream(in);
            case 2 -> new SnappyInputStream(in);
            case 3 -> new LZ4FrameInputStream(in);
            case 4 -> new ZstdInputStream(in);
            default -> throw new InvalidBatchException("unknown compression codec " + codec);
        };
    }
}
