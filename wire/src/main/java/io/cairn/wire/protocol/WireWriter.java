package io.cairn.wire.protocol;

import io.netty.buffer.ByteBuf;

/** Writes Kafka's primitive wire types; generated message classes encode through it. Not thread-safe. */
public interface WireWriter {

    void writeByte(byte value);

    void writeShort(short value);

    void writeInt(int value);

    void writeLong(long value);

    void writeDouble(double value);

    void writeUnsignedVarint(int value);

    void writeVarint(int value);

    void writeVarlong(long value);

    default void writeUuid(Uuid value) {
        writeLong(value.mostSignificantBits());
        writeLong(value.leastSignificantBits());
    }

    void writeByteArray(byte[] bytes);

    /** Writes the readable bytes of {@code buffer} without moving its reader index. */
    void writeByteBuf(ByteBuf buffer);
}
