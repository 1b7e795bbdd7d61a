package io.cairn.wire.protocol;

import java.util.Arrays;

/** A tagged field a message's schema does not name, kept as raw bytes so that it is re-written unchanged. */
public record RawTaggedField(int tag, byte[] data) {

    public int size() {
        return data.length;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RawTaggedField other && tag == other.tag && Arrays.equals(data, other.data);
    }

    @Override
    public int hashCode() {
        return 31 * tag + Arrays.hashCode(data);
    }

    @Override
    public String toString() {
        return "RawTaggedField(tag=" + tag + ", size=" + data.length + ")";
    }
}
