package io.cairn.wire.record;

import io.cairn.wire.error.InvalidRecordException;
import io.cairn.wire.protocol.Varints;
import io.netty.buffer.ByteBuf;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Reads one v2 record and its zig-zag varints from a {@link ByteBuffer} (a view of the batch that {@link RecordBatch}
 * takes once per batch, so a record costs plain array or memory reads) and writes them to a {@link ByteBuf}. Layout of
 * a record:
 *
 * <pre>
 * length          varint   size of everything below
 * attributes      int8     unused, 0
 * timestampDelta  varlong  timestamp - batch baseTimestamp
 * offsetDelta     varint   offset - batch baseOffset
 * keyLength       varint   -1 for a null key
 * key             bytes
 * valueLength     varint   -1 for a null value
 * value           bytes
 * headerCount     varint
 * headers         [headerKeyLength varint, headerKey UTF-8, headerValueLength varint (-1 = null), value bytes]
 * </pre>
 *
 * <p>Decoding never allocates from a length it has not checked against the bytes that are actually there, so a
 * bogus length cannot cause an {@link OutOfMemoryError}; bad structure throws {@link InvalidRecordException} with
 * Kafka's messages. Stateless and thread-safe.
 */
final class RecordCodec {

    /** Smallest encoded record: length, attributes, timestampDelta, offsetDelta, key, value, header count. */
    static final int MIN_RECORD_SIZE = 7;

    private static final int NULL_LENGTH = -1;

    private RecordCodec() {
    }

    /** Where the records of one batch start: the fields every record is relative to. */
    record BatchContext(long baseOffset, long baseTimestamp, int baseSequence, boolean logAppendTime,
                        long maxTimestamp) {
    }

    static Record readRecord(ByteBuffer in, BatchContext batch) {
        int bodySize = readVarint(in);
        if (in.remaining() < bodySize || bodySize < 0) {
            throw new InvalidRecordException("Invalid record size: expected " + bodySize
                    + " bytes in record payload, but instead the buffer has only " + in.remaining()
                    + " remaining bytes.");
        }
        int recordStart = in.position();
        try {
            in.get(); // attributes: unused in v2
            long timestampDelta = readVarlong(in);
            long timestamp = batch.logAppendTime() ? batch.maxTimestamp() : batch.baseTimestamp() + timestampDelta;
            int offsetDelta = readVarint(in);
            long offset = batch.baseOffset() + offsetDelta;
            int sequence = batch.baseSequence() >= 0
                    ? RecordBatch.incrementSequence(batch.baseSequence(), offsetDelta)
                    : Record.NO_SEQUENCE;
            byte[] key = readBytes(in, readVarint(in));
            byte[] value = readBytes(in, readVarint(in));
            List<Header> headers = readHeaders(in);
            int read = in.position() - recordStart;
            if (read != bodySize) {
                throw new InvalidRecordException("Invalid record size: expected to read " + bodySize
                        + " bytes in record payload, but instead read " + read);
            }
            return Record.owning(offset, timestamp, sequence, key, value, headers);
        } catch (IndexOutOfBoundsException | BufferUnderflowException e) {
            throw new InvalidRecordException("Found invalid record structure", e);
        }
    }

    /** Reads one record's structure as {@link #readRecord} does, skipping its key, value and headers. */
    static void scanRecord(ByteBuffer in, int index, long baseTimestamp, boolean logAppendTime, long maxTimestamp,
                           RecordVisitor visitor) {
        int bodySize = readVarint(in);
        if (in.remaining() < bodySize || bodySize < 0) {
            throw new InvalidRecordException("Invalid record size: expected " + bodySize
                    + " bytes in record payload, but instead the buffer has only " + in.remaining()
                    + " remaining bytes.");
        }
        if (bodySize == 0) {
            throw new InvalidRecordException("Found invalid record structure: an empty record");
        }
        int recordStart = in.position();
        in.get(); // attributes: unused in v2
        long timestampDelta = readVarlong(in);
        int offsetDelta = readVarint(in);
        int keySize = skipBytes(in, readVarint(in));
        int valueSize = skipBytes(in, readVarint(in));
        int headers = readVarint(in);
        if (headers < 0) {
            throw new InvalidRecordException("Found invalid number of record headers " + headers);
        }
        if (headers > in.remaining()) {
            throw new InvalidRecordException("Found invalid number of record headers. " + headers
                    + " is larger than the remaining size of the buffer");
        }
        for (int h = 0; h < headers; h++) {
            int headerKeySize = readVarint(in);
            if (headerKeySize < 0) {
                throw new InvalidRecordException("Invalid negative header key size " + headerKeySize);
            }
            skipBytes(in, headerKeySize);
            skipBytes(in, readVarint(in));
        }
        int read = in.position() - recordStart;
        if (read != bodySize) {
            throw new InvalidRecordException("Invalid record size: expected to read " + bodySize
                    + " bytes in record payload, but instead read " + read);
        }
        visitor.record(index, offsetDelta, logAppendTime ? maxTimestamp : baseTimestamp + timestampDelta, keySize,
                valueSize);
    }

    private static int skipBytes(ByteBuffer in, int size) {
        if (size >= 0) {
            checkReadable(in, size);
            in.position(in.position() + size);
        }
        return size < 0 ? -1 : size;
    }

    private static List<Header> readHeaders(ByteBuffer in) {
        int count = readVarint(in);
        if (count < 0) {
            throw new InvalidRecordException("Found invalid number of record headers " + count);
        }
        if (count > in.remaining()) {
            throw new InvalidRecordException("Found invalid number of record headers. " + count
                    + " is larger than the remaining size of the buffer");
        }
        if (count == 0) {
            return Collections.emptyList();
        }
        List<Header> headers = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int keySize = readVarint(in);
            if (keySize < 0) {
                throw new InvalidRecordException("Invalid negative header key size " + keySize);
            }
            String key = new String(readBytes(in, keySize), StandardCharsets.UTF_8);
            headers.add(Header.owning(key, readBytes(in, readVarint(in))));
        }
        return Collections.unmodifiableList(headers);
    }

    private static byte[] readBytes(ByteBuffer in, int size) {
        if (size < 0) {
            return null;
        }
        checkReadable(in, size);
        byte[] bytes = new byte[size];
        in.get(bytes);
        return bytes;
    }

    private static void checkReadable(ByteBuffer in, int size) {
        if (size > in.remaining()) {
            throw new InvalidRecordException("Found invalid record structure: a field of " + size
                    + " bytes with only " + in.remaining() + " bytes left");
        }
    }

    /** Size of a record without its leading length varint. */
    static int sizeOfBody(int offsetDelta, long timestampDelta, byte[] key, byte[] value, byte[][] headerKeys,
                          List<Header> headers) {
        int size = 1 + Varints.sizeOfVarlong(timestampDelta) + Varints.sizeOfVarint(offsetDelta);
        size += sizeOfBytes(key) + sizeOfBytes(value);
        size += Varints.sizeOfVarint(headers.size());
        for (int i = 0; i < headerKeys.length; i++) {
            size += sizeOfBytes(headerKeys[i]) + sizeOfBytes(headers.get(i).valueArray());
        }
        return size;
    }

    private static int sizeOfBytes(byte[] bytes) {
        return bytes == null ? 1 : Varints.sizeOfVarint(bytes.length) + bytes.length;
    }

    /** Writes one record at the writer index; returns the number of bytes written. */
    static int writeRecord(ByteBuf out, int offsetDelta, long timestampDelta, Record record) {
        List<Header> headers = record.headers();
        byte[][] headerKeys = new byte[headers.size()][];
        for (int i = 0; i < headerKeys.length; i++) {
            headerKeys[i] = headers.get(i).key().getBytes(StandardCharsets.UTF_8);
        }
        int bodySize = sizeOfBody(offsetDelta, timestampDelta, record.keyArray(), record.valueArray(), headerKeys,
                headers);
        int start = out.writerIndex();
        writeVarint(out, bodySize);
        out.writeByte(0);
        writeVarlong(out, timestampDelta);
        writeVarint(out, offsetDelta);
        writeBytes(out, record.keyArray());
        writeBytes(out, record.valueArray());
        writeVarint(out, headers.size());
        for (int i = 0; i < headerKeys.length; i++) {
            writeBytes(out, headerKeys[i]);
            writeBytes(out, headers.get(i).valueArray());
        }
        return out.writerIndex() - start;
    }

    private static void writeBytes(ByteBuf out, byte[] bytes) {
        if (bytes == null) {
            writeVarint(out, NULL_LENGTH);
        } else {
            writeVarint(out, bytes.length);
            out.writeBytes(bytes);
        }
    }

    /**
     * Reads a zig-zag varint as Kafka does: at most 5 bytes.
     *
     * @throws InvalidRecordException if the varint has more than 5 bytes or the buffer ends inside it
     */
    static int readVarint(ByteBuffer in) {
        int raw = 0;
        int shift = 0;
        byte b;
        do {
            if (shift > 28) {
                throw new InvalidRecordException("Found invalid record structure: varint is longer than 5 bytes");
            }
            b = readVarintByte(in);
            raw |= (b & 0x7f) << shift;
            shift += 7;
        } while ((b & 0x80) != 0);
        return (raw >>> 1) ^ -(raw & 1);
    }

    /**
     * Reads a zig-zag varlong as Kafka does: at most 10 bytes.
     *
     * @throws InvalidRecordException if the varlong has more than 10 bytes or the buffer ends inside it
     */
    static long readVarlong(ByteBuffer in) {
        long raw = 0;
        int shift = 0;
        byte b;
        do {
            if (shift > 63) {
                throw new InvalidRecordException("Found invalid record structure: varlong is longer than 10 bytes");
            }
            b = readVarintByte(in);
            raw |= (long) (b & 0x7f) << shift;
            shift += 7;
        } while ((b & 0x80) != 0);
        return (raw >>> 1) ^ -(raw & 1);
    }

    private static byte readVarintByte(ByteBuffer in) {
        if (!in.hasRemaining()) {
            throw new InvalidRecordException("Found invalid record structure: the buffer ends inside a varint");
        }
        return in.get();
    }

    static void writeVarint(ByteBuf out, int value) {
        int raw = (value << 1) ^ (value >> 31);
        while ((raw & ~0x7f) != 0) {
            out.writeByte((raw & 0x7f) | 0x80);
            raw >>>= 7;
        }
        out.writeByte(raw);
    }

    static void writeVarlong(ByteBuf out, long value) {
        long raw = (value << 1) ^ (value >> 63);
        while ((raw & ~0x7fL) != 0) {
            out.writeByte((int) ((raw & 0x7f) | 0x80));
            raw >>>= 7;
        }
        out.writeByte((int) raw);
    }
}
