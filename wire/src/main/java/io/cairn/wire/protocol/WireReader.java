package io.cairn.wire.protocol;

import io.netty.buffer.ByteBuf;

import java.util.ArrayList;
import java.util.List;

/**
 * Reads Kafka's primitive wire types; generated message classes decode through it.
 *
 * <p>Every method throws {@link MessageDecodeException} when the input is too short or malformed, never an
 * {@link IndexOutOfBoundsException}: callers map exactly one exception type to "bad frame". Not thread-safe.
 */
public interface WireReader {

    byte readByte();

    short readShort();

    int readInt();

    long readLong();

    double readDouble();

    /** An unsigned LEB128 varint of at most 5 bytes (Kafka {@code ByteUtils.readUnsignedVarint}). */
    int readUnsignedVarint();

    /** A zig-zag encoded varint. */
    int readVarint();

    /** A zig-zag encoded varlong. */
    long readVarlong();

    default Uuid readUuid() {
        return new Uuid(readLong(), readLong());
    }

    /** {@code length} bytes decoded as UTF-8. */
    String readString(int length);

    /** {@code length} bytes copied into a new array. */
    byte[] readBytes(int length);

    /**
     * A {@code records} field: {@code length} bytes as a buffer the caller owns and must release. Over a
     * {@link io.netty.buffer.ByteBuf} this is a retained slice (no copy).
     */
    ByteBuf readRecords(int length);

    /** Bytes left to read. */
    int remaining();

    /** Reads a tagged field this version does not know and keeps it, so that re-writing the message keeps it too. */
    default List<RawTaggedField> readUnknownTaggedField(List<RawTaggedField> unknowns, int tag, int size) {
        List<RawTaggedField> result = unknowns == null ? new ArrayList<>() : unknowns;
        result.add(new RawTaggedField(tag, readBytes(size)));
        return result;
    }
}
