package io.cairn.log.cleaner;

import java.nio.ByteBuffer;
import java.security.DigestException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * Key → latest offset over the part of a log one cleaning pass maps, in memory that does not grow with the keys
 * (the idea of Kafka's {@code SkimpyOffsetMap}): an open-addressing hash table whose entries are the MD5 digest of a
 * key (16 bytes) and its offset (8 bytes), in at most {@code memoryBytes} bytes, filled to at most
 * {@code loadFactor} of its slots. Two keys with the same digest count as one key, as in Kafka (the chance is
 * negligible for MD5). The table starts small (4096 slots, 96 KiB) and, once a pass has more keys than that takes,
 * moves to its whole bound in one step (so the old and new tables together never pass the bound by more than the
 * small one), so a pass over a few keys does not hold the whole buffer. {@link #put} refuses a new key once the map
 * holds {@link #capacity()} keys (an existing key's offset is still updated), and the cleaner then stops mapping
 * there.
 *
 * <p>An occupied slot stores {@code offset + 1}, so an all-zero offset field marks an empty slot. Linear probing;
 * lookups end at an empty slot, which the capacity (at most the slots less one) guarantees.
 *
 * <p>Not thread-safe: one pass uses one map.
 */
final class OffsetMap {

    /** Bytes of one entry: the key's MD5 digest and its offset. */
    static final int ENTRY_BYTES = 24;
    private static final int DIGEST_BYTES = 16;
    /** Slots the table starts with (or fewer when the bound is smaller). */
    private static final int INITIAL_SLOTS = 4096;

    private final int maxSlots;
    private final double loadFactor;
    private final int capacity;
    private final MessageDigest md5;
    private final byte[] digest = new byte[DIGEST_BYTES];
    private ByteBuffer table;
    private int slots;
    /** Entries the current table takes before it doubles. */
    private int growAt;
    private int entries;

    /**
     * @param memoryBytes the most bytes the table may take ({@code log.cleaner.dedupe.buffer.size} per thread;
     *                    capped at {@code Integer.MAX_VALUE}, as Kafka caps it)
     * @param loadFactor  the share of slots that may be filled ({@code log.cleaner.io.buffer.load.factor})
     * @throws IllegalArgumentException when not even one key fits (Kafka's "offset map is too small")
     */
    OffsetMap(long memoryBytes, double loadFactor) {
        this.maxSlots = (int) (Math.min(memoryBytes, Integer.MAX_VALUE) / ENTRY_BYTES);
        this.loadFactor = loadFactor;
        this.capacity = capacityOf(memoryBytes, loadFactor);
        if (capacity < 1) {
            throw new IllegalArgumentException(tooSmall(memoryBytes, loadFactor));
        }
        try {
            this.md5 = MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JVM has no MD5", e);
        }
        resize(Math.min(maxSlots, INITIAL_SLOTS));
    }

    /** Why a map of {@code memoryBytes} filled to {@code loadFactor} cannot work (Kafka's words). */
    static String tooSmall(long memoryBytes, double loadFactor) {
        return "offset map of " + memoryBytes + " bytes with load factor " + loadFactor + " is too small to fit in "
            + "even a single message, so log cleaning will never make progress. You can increase "
            + "log.cleaner.dedupe.buffer.size or decrease log.cleaner.threads";
    }

    /** The keys a map of {@code memoryBytes} bytes filled to {@code loadFactor} holds (0 when none fits). */
    static int capacityOf(long memoryBytes, double loadFactor) {
        int slots = (int) (Math.min(memoryBytes, Integer.MAX_VALUE) / ENTRY_BYTES);
        // at least one slot stays empty, so a lookup of a missing key ends
        return (int) Math.min(slots - 1L, (long) (slots * Math.max(0.0, loadFactor)));
    }

    /** The most keys this map holds. */
    int capacity() {
        return capacity;
    }

    /** The keys in the map. */
    int size() {
        return entries;
    }

    /** Bytes the table takes now (at most the bound given). */
    long allocatedBytes() {
        return (long) slots * ENTRY_BYTES;
    }

    /**
     * Maps {@code key} to {@code offset}, or to the offset it had when that is later; returns false, changing
     * nothing, when the key is new and the map already holds {@link #capacity()} keys.
     */
    boolean put(ByteBuffer key, long offset) {
        digestOf(key);
        int pos = find(digest);
        if (table.getLong(pos + DIGEST_BYTES) != 0) {
            if (offset + 1 > table.getLong(pos + DIGEST_BYTES)) {
                table.putLong(pos + DIGEST_BYTES, offset + 1);
            }
            return true;
        }
        if (entries >= capacity) {
            return false;
        }
        if (entries >= growAt && slots < maxSlots) {
            resize(maxSlots);
            pos = find(digest);
        }
        table.put(pos, digest);
        table.putLong(pos + DIGEST_BYTES, offset + 1);
        entries++;
        return true;
    }

    /** The latest offset of {@code key}, or -1 when the key is not in the map. */
    long get(ByteBuffer key) {
        digestOf(key);
        return table.getLong(find(digest) + DIGEST_BYTES) - 1;
    }

    /** Whether a new key would be refused. */
    boolean isFull() {
        return entries >= capacity;
    }

    /** The position of {@code hash}'s slot, or of the empty slot where it would go. */
    private int find(byte[] hash) {
        int start = ((hash[0] & 0x7f) << 24 | (hash[1] & 0xff) << 16 | (hash[2] & 0xff) << 8 | (hash[3] & 0xff))
            % slots;
        int slot = start;
        do {
            int pos = slot * ENTRY_BYTES;
            if (table.getLong(pos + DIGEST_BYTES) == 0 || sameDigest(pos, hash)) {
                return pos;
            }
            slot = slot + 1 == slots ? 0 : slot + 1;
        } while (slot != start);
        throw new IllegalStateException("offset map has no free slot");
    }

    private boolean sameDigest(int pos, byte[] hash) {
        return table.getLong(pos) == getLong(hash, 0) && table.getLong(pos + 8) == getLong(hash, 8);
    }

    private static long getLong(byte[] b, int at) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = v << 8 | (b[at + i] & 0xff);
        }
        return v;
    }

    /** A table of {@code newSlots} slots holding the entries of the old one. */
    private void resize(int newSlots) {
        ByteBuffer old = table;
        int oldSlots = slots;
        table = ByteBuffer.allocate(newSlots * ENTRY_BYTES);
        slots = newSlots;
        growAt = newSlots == maxSlots ? Integer.MAX_VALUE : (int) (newSlots * Math.min(loadFactor, 0.75));
        if (old == null) {
            return;
        }
        byte[] hash = new byte[DIGEST_BYTES];
        for (int s = 0; s < oldSlots; s++) {
            int from = s * ENTRY_BYTES;
            long stored = old.getLong(from + DIGEST_BYTES);
            if (stored != 0) {
                old.get(from, hash);
                int to = find(hash);
                table.put(to, hash);
                table.putLong(to + DIGEST_BYTES, stored);
            }
        }
    }

    private void digestOf(ByteBuffer key) {
        md5.update(key.duplicate());
        try {
            md5.digest(digest, 0, DIGEST_BYTES);
        } catch (DigestException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public String toString() {
        return "OffsetMap(" + entries + "/" + capacity + " keys, " + slots + " slots" + ")";
    }

}
