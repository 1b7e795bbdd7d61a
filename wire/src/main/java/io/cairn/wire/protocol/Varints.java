package io.cairn.wire.protocol;

/** Sizes of Kafka's variable-length integers (unsigned LEB128, and zig-zag for signed values). Stateless. */
public final class Varints {

    private Varints() {
    }

    public static int sizeOfUnsignedVarint(int value) {
        // Each byte carries 7 bits: 1 byte up to 2^7-1, ..., 5 bytes for the top bits of a 32-bit value.
        int leadingZeros = Integer.numberOfLeadingZeros(value);
        int bits = 32 - leadingZeros;
        return bits == 0 ? 1 : (bits + 6) / 7;
    }

    public static int sizeOfVarint(int value) {
        return sizeOfUnsignedVarint((value << 1) ^ (value >> 31));
    }

    public static int sizeOfUnsignedVarlong(long value) {
        int bits = 64 - Long.numberOfLeadingZeros(value);
        return bits == 0 ? 1 : (bits + 6) / 7;
    }

    public static int sizeOfVarlong(long value) {
        return sizeOfUnsignedVarlong((value << 1) ^ (value >> 63));
    }
}
