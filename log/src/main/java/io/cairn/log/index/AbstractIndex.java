package io.cairn.log.index;

import io.cairn.log.io.FileLayer;
import io.cairn.log.io.OpenResources;
import io.cairn.log.io.Unmapper;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A sparse, sorted, memory-mapped index file of fixed-size entries keyed by an offset relative to the segment's
 * base offset (Kafka's {@code AbstractIndex}). The file of the active segment is preallocated to
 * {@code segment.index.bytes} and trimmed to its entries on roll and on close; it is mapped lazily on first use and
 * can be unmapped ({@link #release()}) to keep the number of live mappings bounded, then mapped again on demand.
 *
 * <p>Thread-safety: every method is {@code synchronized}; appends come from the one writer of the partition
 * (under {@code PartitionLog}'s lock), lookups from any reader thread.
 */
public abstract class AbstractIndex implements Closeable {

    private final FileLayer layer;
    private final long baseOffset;
    private final int entrySize;
    private volatile Path file;
    private int maxIndexSize;
    private MappedByteBuffer mmap;
    private int entries;
    private boolean writable;
    private OpenResources budget;
    private final Runnable evictor = this::release;

    protected AbstractIndex(FileLayer layer, Path file, long baseOffset, int maxIndexSize, boolean writable,
                            int entrySize) {
        this.layer = layer;
        this.file = file;
        this.baseOffset = baseOffset;
        this.entrySize = entrySize;
        this.maxIndexSize = roundDown(maxIndexSize);
        this.writable = writable;
        this.entries = -1;
    }

    public long baseOffset() {
        return baseOffset;
    }

    /** Counts this index's mapping against {@code budget}, which may unmap it when it is over its bound. */
    public synchronized void useBudget(OpenResources budget) {
        this.budget = budget;
    }

    public Path file() {
        return file;
    }

    public synchronized int entries() {
        ensureMapped();
        return entries;
    }

    public synchronized int maxEntries() {
        ensureMapped();
        return mmap.limit() / entrySize;
    }

    public synchronized boolean isFull() {
        ensureMapped();
        return entries >= mmap.limit() / entrySize;
    }

    /** Bytes the index occupies on disk now (the preallocated size while active). */
    public synchronized long sizeInBytes() {
        ensureMapped();
        return mmap.limit();
    }

    /** Maps the file when it is not mapped; a new file is created (preallocated when writable). */
    protected final void ensureMapped() {
        if (mmap != null) {
            return;
        }
        if (budget != null) {
            budget.touch(evictor);
        }
        try (FileChannel ch = layer.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
            StandardOpenOption.WRITE)) {
            long existing = ch.size();
            int length = writable ? Math.max(maxIndexSize, roundDown((int) existing)) : roundDown((int) existing);
            setLength(ch, existing, length);
            mmap = ch.map(FileChannel.MapMode.READ_WRITE, 0, length);
            if (entries < 0) {
                entries = countValidEntries((int) Math.min(existing, length));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot map index " + file, e);
        }
    }

    private static void setLength(FileChannel ch, long existing, int length) throws IOException {
        if (existing > length) {
            ch.truncate(length);
        } else if (existing < length) {
            ch.write(ByteBuffer.wrap(new byte[1]), length - 1L);
        }
    }

    /**
     * Counts the strictly increasing prefix of entries: after an unclean shutdown the preallocated tail is zeros,
     * and a zero entry after the first never increases the key.
     */
    private int countValidEntries(int bytes) {
        int n = bytes / entrySize;
        int valid = 0;
        long previous = Long.MIN_VALUE;
        for (int i = 0; i < n; i++) {
            long key = keyAt(mmap, i);
            if (i > 0 && key <= previous) {
                break;
            }
            if (relativeOffsetAt(mmap, i) < 0) {
                break;
            }
            previous = key;
            valid++;
        }
        return valid;
    }

    /** The sort key of entry {@code n} (offset or timestamp) used to find the valid prefix. */
    protected abstract long keyAt(ByteBuffer buf, int n);

    /** The relative offset stored in entry {@code n}. */
    protected abstract int relativeOffsetAt(ByteBuffer buf, int n);

    protected final ByteBuffer buffer() {
        ensureMapped();
        return mmap;
    }

    protected final int entrySize() {
        return entrySize;
    }

    protected final void setEntries(int entries) {
        this.entries = entries;
    }

    /** Index of the largest entry whose key is at most {@code target}, or -1; the caller holds the lock. */
    protected final int largestLowerBound(long target, boolean byOffset) {
        ensureMapped();
        int lo = 0;
        int hi = entries - 1;
        int found = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            long key = byOffset ? relativeOffsetAt(mmap, mid) + baseOffset : keyAt(mmap, mid);
            if (key <= target) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found;
    }

    /** Index of the smallest entry whose key is at least {@code target}, or -1; the caller holds the lock. */
    protected final int smallestUpperBound(long target, boolean byOffset) {
        ensureMapped();
        int lo = 0;
        int hi = entries - 1;
        int found = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            long key = byOffset ? relativeOffsetAt(mmap, mid) + baseOffset : keyAt(mmap, mid);
            if (key >= target) {
                found = mid;
                hi = mid - 1;
            } else {
                lo = mid + 1;
            }
        }
        return found;
    }

    /** Removes every entry whose offset is at least {@code offset}. */
    public synchronized void truncateTo(long offset) {
        int firstRemoved = smallestUpperBound(offset, true);
        if (firstRemoved >= 0) {
            truncateToEntries(firstRemoved);
        }
    }

    /** Keeps the first {@code n} entries and zeroes the rest of the last removed entry's slot. */
    public synchronized void truncateToEntries(int n) {
        ensureMapped();
        entries = Math.min(entries, n);
        for (int i = entries * entrySize; i < Math.min(mmap.limit(), (entries + 1) * entrySize); i++) {
            mmap.put(i, (byte) 0);
        }
        onTruncated();
    }

    /** Hook for subclasses that cache the last entry. */
    protected void onTruncated() {
    }

    /** Removes all entries. */
    public synchronized void reset() {
        truncateToEntries(0);
    }

    /** Shrinks the file to its entries (on roll and close); the index stays readable. */
    public synchronized void trimToValidSize() {
        ensureMapped();
        resize(entries * entrySize);
        writable = false;
    }

    /** Grows the file back to {@code maxIndexSize} so the segment can take appends again (the active segment). */
    public synchronized void makeWritable(int maxIndexSize) {
        this.maxIndexSize = roundDown(maxIndexSize);
        writable = true;
        resize(Math.max(this.maxIndexSize, entries() * entrySize));
    }

    private void resize(int length) {
        ensureMapped();
        int keep = entries;
        Unmapper.unmap(mmap);
        mmap = null;
        try (FileChannel ch = layer.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            setLength(ch, ch.size(), length);
            mmap = ch.map(FileChannel.MapMode.READ_WRITE, 0, length);
            entries = keep;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot resize index " + file, e);
        }
    }

    /** Writes the mapped pages and the file to disk. */
    public synchronized void flush() {
        if (mmap == null) {
            return;
        }
        mmap.force();
        try (FileChannel ch = layer.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ch.force(true);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot flush index " + file, e);
        }
    }

    /** Unmaps the file; the next use maps it again. */
    public synchronized void release() {
        if (budget != null) {
            budget.forget(evictor);
        }
        if (mmap != null) {
            Unmapper.unmap(mmap);
            mmap = null;
        }
    }

    public synchronized boolean isMapped() {
        return mmap != null;
    }

    /** Renames the file (retention and compaction suffixes); the mapping stays valid. */
    public synchronized void renameTo(Path target) throws IOException {
        if (Files.exists(file)) {
            Files.move(file, target, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        }
        file = target;
    }

    /** Unmaps and deletes the file. */
    public synchronized void deleteIfExists() throws IOException {
        release();
        Files.deleteIfExists(file);
    }

    @Override
    public synchronized void close() {
        if (mmap != null && writable) {
            trimToValidSize();
        }
        release();
    }

    private int roundDown(int size) {
        return size / entrySize * entrySize;
    }
}
