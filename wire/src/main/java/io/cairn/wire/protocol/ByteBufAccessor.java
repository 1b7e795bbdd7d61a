package io.cairn.wire.protocol;

import io.netty.buffer.ByteBuf;

import java.nio.charset.StandardCharsets;

/**
 * The production {@link WireReader} and {@link WireWriter}: reads from the reader index and writes at the writer
 * index of one Netty {@link ByteBuf}. The only implementation on the hot path, so calls stay monomorphic.
 *
 * <p>Reads check the remaining length first and throw {@link MessageDecodeException}. Not thread-safe; the
 * accessor does not own the buffer.
 */
public final class ByteBufAccessor implements WireReader, WireWriter {

    private final ByteBuf buf;

    public ByteBufAccessor(ByteBuf buf) {
        this.buf = buf;
    }

    public ByteBuf buffer() {
        return buf;
    }

    private void need(int bytes) {
        if (buf.readableBytes() < bytes) {
            throw new MessageDecodeException("Needed " + bytes + " bytes but only " + buf.readableBytes()
                    + " remain");
        }
    }

    private void needLength(int length) {
        if (length < 0) {
            throw new MessageDecodeException("Negative length " + length);
        }
        need(length);
    }

    @Override
    public byte readByte() {
        need(1);
        return buf.readByte();
    }

    @Override
    public short readShort() {
        need(2);
        return buf.readShort();
    }

    @Override
    public int readInt() {
        need(4);
        return buf.readInt();
    }

    @Override
    public long readLong() {
        need(8);
        return buf.readLong();
    }

    @Override
    public double readDouble() {
        need(8);
        return buf.readDouble();
    }

    @Override
    public int readUnsignedVarint() {
        int value = 0;
        for (int shift = 0; shift < 35; shift += 7) {
            byte b = readByte();
            value |= (b & 0x7f) << shift;
            if ((b & 0x80) == 0) {
                if (shift == 28 && (b & 0xf0) != 0) {
                    break;
                }
                return value;
            }
        }
        throw new MessageDecodeException("Varint is too long or overflows 32 bits");
    }

    @Override
    public int readVarint() {
        int raw = readUnsignedVarint();
        return (raw >>> 1) ^ -(raw & 1);
    }

    @Override
    public long readVarlong() {
        long value = 0L;
        for (int shift = 0; shift < 70; shift += 7) {
            byte b = readByte();
            value |= (long) (b & 0x7f) << shift;
            if ((b & 0x80) == 0) {
                if (shift == 63 && (b & 0x7e) != 0) {
                    break;
                }
                return (value >>> 1) ^ -(value & 1);
            }
        }
        throw new MessageDecodeException("Varlong is too long or overflows 64 bits");
    }

    @Override
    public String readString(int length) {
        needLength(length);
        String value = buf.toString(buf.readerIndex(), length, StandardCharsets.UTF_8);
        buf.skipBytes(length);
        return value;
    }

    @Override
    public byte[] readBytes(int length) {
        needLength(length);
        byte[] bytes = new byte[length];
        buf.readBytes(bytes);
        return bytes;
    }

    @Override
    public ByteBuf readRecords(int length) {
        needLength(length);
        return buf.readRetainedSlice(length);
    }

    @Override
    public int remaining() {
        return buf.readableBytes();
    }

    @Override
    public void writeByte(byte value) {
        buf.writeByte(value);
    }

    @Override
    public void writeShort(short value) {
        buf.writeShort(value);
    }

    @Override
    public void writeInt(int value) {
        buf.writeInt(value);
    }

    @Override
    public void writeLong(long value) {
        buf.writeLong(value);
    }

    @Override
    public void writeDouble(double value) {
        buf.writeDouble(value);
    }

    @Override
    public void writeUnsignedVarint(int value) {
        int v = value;
        while ((v & 0xffffff80) != 0) {
            buf.writeByte((v & 0x7f) | 0x80);
            v >>>= 7;
        }
        buf.writeByte(v);
    }

    @Override
    public void writeVarint(int value) {
        writeUnsignedVarint((value << 1) ^ (value >> 31));
    }

    @Override
    public void writeVarlong(long value) {
        long v = (value << 1) ^ (value >> 63);
        while ((v & 0xffffffffffffff80L) != 0L) {
            buf.writeByte(((int) v & 0x7f) | 0x80);
            v >>>= 7;
        }
        buf.writeByte((int) v);
    }

    @Override
    public void writeByteArray(byte[] bytes) {
        buf.writeBytes(bytes);
    }

    @Override
    public void writeByteBuf(ByteBuf buffer) {
        buf.writeBytes(buffer, buffer.readerIndex(), buffer.readableBytes());
    }
}
