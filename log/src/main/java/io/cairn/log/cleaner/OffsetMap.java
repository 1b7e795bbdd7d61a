package io.cairn.log.cleaner;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;

/**
 * Key → latest offset over the dirty part of a log (Kafka's {@code SkimpyOffsetMap}, here a plain hash map of key
 * copies: exact, at the price of memory proportional to the distinct keys of one pass). Not thread-safe.
 */
final class OffsetMap {

    private final Map<ByteBuffer, Long> latest = new HashMap<>();

    void put(ByteBuffer key, long offset) {
        ByteBuffer copy = ByteBuffer.allocate(key.remaining());
        copy.put(key.duplicate()).flip();
        latest.merge(copy, offset, Math::max);
    }

    /** The latest offset of {@code key}, or -1. */
    long get(ByteBuffer key) {
        Long offset = latest.get(key);
        return offset == null ? -1L : offset;
    }

    int size() {
        return latest.size();
    }
}
