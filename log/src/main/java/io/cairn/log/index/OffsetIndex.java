package io.cairn.log.index;

import io.cairn.log.io.FileLayer;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * The {@code .index} file of a segment: maps the last offset of some batches to their byte position, one entry per
 * {@code index.interval.bytes} of log, so a read finds its batch with a binary search and a short scan. The format
 * is Kafka's, so {@code kafka-dump-log} checks it: each entry is 8 bytes, big-endian,
 * <pre>
 *  0 relativeOffset int32   batch last offset - segment base offset
 *  4 position       int32   byte position of that batch in the .log file
 * </pre>
 * Entries are strictly increasing in both fields. Thread-safety: see {@link AbstractIndex}.
 */
public final class OffsetIndex extends AbstractIndex {

    public static final int ENTRY_SIZE = 8;

    public OffsetIndex(FileLayer layer, Path file, long baseOffset, int maxIndexSize, boolean writable) {
        super(layer, file, baseOffset, maxIndexSize, writable, ENTRY_SIZE);
    }

    @Override
    protected long keyAt(ByteBuffer buf, int n) {
        return buf.getInt(n * ENTRY_SIZE);
    }

    @Override
    protected int relativeOffsetAt(ByteBuffer buf, int n) {
        return buf.getInt(n * ENTRY_SIZE);
    }

    /** Entry {@code n}, with the absolute offset. */
    public synchronized OffsetPosition entry(int n) {
        ByteBuffer buf = buffer();
        return new OffsetPosition(baseOffset() + buf.getInt(n * ENTRY_SIZE), buf.getInt(n * ENTRY_SIZE + 4));
    }

    /** The last entry, or (baseOffset, 0) when empty. */
    public synchronized OffsetPosition lastEntry() {
        int n = entries();
        return n == 0 ? new OffsetPosition(baseOffset(), 0) : entry(n - 1);
    }

    /**
     * The entry with the largest offset at most {@code targetOffset}: scanning the log from its position finds the
     * batch holding {@code targetOffset}. Returns (baseOffset, 0) when there is none.
     */
    public synchronized OffsetPosition lookup(long targetOffset) {
        int slot = largestLowerBound(targetOffset, true);
        return slot < 0 ? new OffsetPosition(baseOffset(), 0) : entry(slot);
    }

    /**
     * An offset above every record of the {@code fetchSize} bytes read from {@code startPosition}: the offset of the
     * first entry positioned past them, or -1 when no entry is (Kafka's {@code fetchUpperBoundOffset}; the caller then
     * takes the next segment's base offset or the log end).
     */
    public synchronized long fetchUpperBoundOffset(int startPosition, int fetchSize) {
        long end = (long) startPosition + fetchSize;
        int low = 0;
        int high = entries() - 1;
        long found = -1L;
        while (low <= high) {
            int mid = (low + high) >>> 1;
            OffsetPosition entry = entry(mid);
            if (entry.position() > end) {
                found = entry.offset();
                high = mid - 1;
            } else {
                low = mid + 1;
            }
        }
        return found;
    }

    /** Appends an entry; offsets and positions must grow. */
    public synchronized void append(long offset, int position) {
        int n = entries();
        if (isFull()) {
            throw new IllegalStateException("offset index " + file() + " is full");
        }
        if (n > 0) {
            OffsetPosition last = entry(n - 1);
            if (offset <= last.offset() || position <= last.position()) {
                throw new IllegalArgumentException("offset index entry (" + offset + ", " + position
                    + ") does not follow (" + last.offset() + ", " + last.position() + ") in " + file());
            }
        }
        long relative = offset - baseOffset();
        if (relative < 0 || relative > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("offset " + offset + " outside segment " + baseOffset());
        }
        ByteBuffer buf = buffer();
        buf.putInt(n * ENTRY_SIZE, (int) relative);
        buf.putInt(n * ENTRY_SIZE + 4, position);
        setEntries(n + 1);
    }
}
