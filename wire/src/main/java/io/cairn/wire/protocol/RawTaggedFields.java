package io.cairn.wire.protocol;

import java.util.List;

/** Comparison of unknown tagged field lists for generated {@code equals}: null and empty are the same. Stateless. */
public final class RawTaggedFields {

    private RawTaggedFields() {
    }

    public static boolean equal(List<RawTaggedField> first, List<RawTaggedField> second) {
        boolean firstEmpty = first == null || first.isEmpty();
        boolean secondEmpty = second == null || second.isEmpty();
        if (firstEmpty || secondEmpty) {
            return firstEmpty && secondEmpty;
        }
        return first.equals(second);
    }
}
