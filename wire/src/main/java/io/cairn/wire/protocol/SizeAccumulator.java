package io.cairn.wire.protocol;

/**
 * Sums the encoded size of a message, keeping apart the bytes of {@code records} fields, which the server sends
 * without copying. Not thread-safe.
 */
public final class SizeAccumulator {

    private int totalSize;
    private int zeroCopySize;

    public void addBytes(int size) {
        totalSize += size;
    }

    /** Bytes of a {@code records} field: counted in the total and, separately, as zero-copy bytes. */
    public void addZeroCopyBytes(int size) {
        zeroCopySize += size;
        totalSize += size;
    }

    public int totalSize() {
        return totalSize;
    }

    public int zeroCopySize() {
        return zeroCopySize;
    }
}
