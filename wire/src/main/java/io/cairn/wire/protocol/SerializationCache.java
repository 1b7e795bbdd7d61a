package io.cairn.wire.protocol;

import java.util.IdentityHashMap;

/**
 * Values computed while sizing a message that writing it needs again: the UTF-8 bytes of strings and the sizes of
 * nested structs in flexible versions. Keyed by identity, used for one size-then-write pass. Not thread-safe.
 */
public final class SerializationCache {

    private final IdentityHashMap<Object, byte[]> serializedValues = new IdentityHashMap<>();
    private final IdentityHashMap<Object, Integer> sizes = new IdentityHashMap<>();

    public void cacheSerializedValue(Object value, byte[] serialized) {
        serializedValues.put(value, serialized);
    }

    public byte[] getSerializedValue(Object value) {
        return serializedValues.get(value);
    }

    public void setArraySizeInBytes(Object value, int size) {
        sizes.put(value, size);
    }

    public int getArraySizeInBytes(Object value) {
        Integer size = sizes.get(value);
        if (size == null) {
            throw new IllegalStateException("No size cached for " + value.getClass().getSimpleName());
        }
        return size;
    }
}
