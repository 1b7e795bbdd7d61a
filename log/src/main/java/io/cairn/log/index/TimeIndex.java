package io.cairn.log.index;

import io.cairn.log.io.FileLayer;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * The {@code .timeindex} file of a segment: the largest timestamp seen so far and the last offset of the batch that
 * carries it, appended next to offset-index entries when the timestamp grew, so a ListOffsets by timestamp skips to
 * the right batch. Kafka's format (12-byte entries, big-endian, strictly increasing timestamps):
 * <pre>
 *  0 timestamp      int64   max timestamp so far in the segment
 *  8 relativeOffset int32   last offset of the batch with that timestamp - segment base offset
 * </pre>
 * Thread-safety: see {@link AbstractIndex}.
 */
public final class TimeIndex extends AbstractIndex {

    public static final int ENTRY_SIZE = 12;

    public TimeIndex(FileLayer layer, Path file, long baseOffset, int maxIndexSize, boolean writable) {
        super(layer, file, baseOffset, maxIndexSize, writable, ENTRY_SIZE);
    }

    @Override
    protected long keyAt(ByteBuffer buf, int n) {
        return buf.getLong(n * ENTRY_SIZE);
    }

    @Override
    protected int relativeOffsetAt(ByteBuffer buf, int n) {
        return buf.getInt(n * ENTRY_SIZE + 8);
    }

    public synchronized TimestampOffset entry(int n) {
        ByteBuffer buf = buffer();
        return new TimestampOffset(buf.getLong(n * ENTRY_SIZE), baseOffset() + buf.getInt(n * ENTRY_SIZE + 8));
    }

    /** The last entry, or (-1, baseOffset) when empty. */
    public synchronized TimestampOffset lastEntry() {
        int n = entries();
        return n == 0 ? new TimestampOffset(-1L, baseOffset()) : entry(n - 1);
    }

    /** The entry with the largest timestamp at most {@code timestamp}, or (-1, baseOffset). */
    public synchronized TimestampOffset lookup(long timestamp) {
        int slot = largestLowerBound(timestamp, false);
        return slot < 0 ? new TimestampOffset(-1L, baseOffset()) : entry(slot);
    }

    /** Appends when {@code timestamp} is larger than the last entry's; returns whether it did. */
    public synchronized boolean maybeAppend(long timestamp, long offset) {
        int n = entries();
        if (n > 0) {
            TimestampOffset last = entry(n - 1);
            if (timestamp <= last.timestamp()) {
                return false;
            }
            if (offset < last.offset()) {
                throw new IllegalArgumentException("time index offset " + offset + " < " + last.offset());
            }
            if (offset == last.offset()) {
                return false;
            }
        }
        if (isFull()) {
            throw new IllegalStateException("time index " + file() + " is full");
        }
        ByteBuffer buf = buffer();
        buf.putLong(n * ENTRY_SIZE, timestamp);
        buf.putInt(n * ENTRY_SIZE + 8, (int) (offset - baseOffset()));
        setEntries(n + 1);
        return true;
    }
}
