package io.cairn.log.segment;

import io.cairn.log.FileSlice;
import io.cairn.log.io.FileLayer;
import io.cairn.log.io.OpenResources;
import io.cairn.log.io.SharedChannel;
import io.cairn.wire.record.RecordBatch;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The {@code .log} file of a segment: concatenated v2 batches in Kafka's byte format. Appends go to the end; the
 * visible size moves only after the bytes are written, so a reader never sees half a batch the writer is still
 * writing. The channel is opened lazily, counted against an {@link OpenResources} budget, and reference-counted so
 * eviction never closes it under a reader.
 *
 * <p>A new file may be preallocated ({@code preallocate}, Kafka's {@code FileRecords.openChannel}): it is created at
 * its full length at once, its visible size 0, and {@link #trim} cuts it back to the bytes written when the segment
 * rolls or closes. A preallocated file found after a crash is as long as it was allocated; the recovery of the
 * unclean shutdown truncates the zeros after the last batch as it does a torn tail.
 *
 * <p>Thread-safety: one writer (appends, truncation) at a time, guarded by the partition's lock; reads and slices
 * from any thread.
 */
public final class FileRecords implements AutoCloseable {

    private final FileLayer layer;
    private final OpenResources handles;
    private final Runnable evictor = this::closeHandle;
    private final AtomicInteger size;
    private volatile Path file;
    private SharedChannel current;
    /** Whether the file may be longer than its data (created preallocated, not trimmed since); the writer's. */
    private volatile boolean preallocated;

    public FileRecords(FileLayer layer, Path file, OpenResources handles) throws IOException {
        this(layer, file, handles, 0);
    }

    /**
     * Opens {@code file}, creating it when missing: then at {@code preallocateBytes} bytes when that is positive
     * (its visible size 0), else empty.
     */
    public FileRecords(FileLayer layer, Path file, OpenResources handles, int preallocateBytes) throws IOException {
        this.layer = layer;
        this.file = file;
        this.handles = handles;
        if (!Files.exists(file)) {
            try (FileChannel ch = layer.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
                if (preallocateBytes > 0) {
                    // one byte at the end sets the length, as RandomAccessFile.setLength (Kafka's) does
                    ch.write(ByteBuffer.allocate(1), preallocateBytes - 1L);
                    preallocated = true;
                }
            }
        }
        long length = preallocated ? 0 : Files.size(file);
        if (length > Integer.MAX_VALUE) {
            throw new IOException("segment " + file + " is larger than 2 GiB");
        }
        this.size = new AtomicInteger((int) length);
    }

    public Path file() {
        return file;
    }

    /** Bytes visible to readers. */
    public int sizeInBytes() {
        return size.get();
    }

    /** A retained channel; the caller releases it. */
    public SharedChannel acquire() {
        while (true) {
            SharedChannel ch;
            synchronized (this) {
                if (current == null) {
                    try {
                        current = new SharedChannel(layer.open(file, StandardOpenOption.READ,
                            StandardOpenOption.WRITE));
                    } catch (IOException e) {
                        throw new UncheckedIOException("cannot open " + file, e);
                    }
                }
                ch = current;
            }
            handles.touch(evictor);
            if (ch.tryRetain()) {
                return ch;
            }
        }
    }

    /** Closes the handle (budget eviction); readers holding slices keep theirs until they release. */
    public void closeHandle() {
        SharedChannel ch;
        synchronized (this) {
            ch = current;
            current = null;
        }
        handles.forget(evictor);
        if (ch != null) {
            ch.release();
        }
    }

    public synchronized boolean isHandleOpen() {
        return current != null;
    }

    /** Appends the remaining bytes of {@code src} at the end; returns the position they were written at. */
    public int append(ByteBuffer src) {
        int at = size.get();
        int length = src.remaining();
        if ((long) at + length > Integer.MAX_VALUE) {
            throw new IllegalStateException("segment " + file + " would exceed 2 GiB");
        }
        SharedChannel ch = acquire();
        try {
            long pos = at;
            while (src.hasRemaining()) {
                pos += ch.channel().write(src, pos);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot append to " + file, e);
        } finally {
            ch.release();
        }
        size.addAndGet(length);
        return at;
    }

    /** Reads {@code dst.remaining()} bytes at {@code position} or up to the end of the file. */
    public void readInto(ByteBuffer dst, long position) {
        SharedChannel ch = acquire();
        try {
            long pos = position;
            while (dst.hasRemaining()) {
                int n = ch.channel().read(dst, pos);
                if (n < 0) {
                    break;
                }
                pos += n;
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        } finally {
            ch.release();
        }
    }

    /**
     * The header of the batch at {@code position}, or {@code null} when fewer than a header's bytes remain before
     * {@code end} or the stated size runs past {@code end} (a torn tail).
     */
    public FileBatch batchAt(int position, int end) {
        if (end - position < RecordBatch.RECORD_BATCH_OVERHEAD) {
            return null;
        }
        ByteBuffer header = ByteBuffer.allocate(RecordBatch.RECORD_BATCH_OVERHEAD);
        readInto(header, position);
        if (header.hasRemaining()) {
            return null;
        }
        header.flip();
        int batchSize = RecordBatch.of(header, 0).sizeInBytes();
        if (batchSize < RecordBatch.RECORD_BATCH_OVERHEAD || batchSize > end - position) {
            return null;
        }
        return new FileBatch(position, header);
    }

    /** The whole batch at {@code batch.position()}. */
    public ByteBuffer readBatch(FileBatch batch) {
        ByteBuffer buf = ByteBuffer.allocate(batch.sizeInBytes());
        readInto(buf, batch.position());
        return buf.flip();
    }

    /** A retained slice of {@code length} bytes at {@code position}. */
    public FileSlice slice(int position, int length) {
        if (length <= 0) {
            return FileSlice.empty();
        }
        return new FileSlice(acquire(), position, length);
    }

    /**
     * Cuts a preallocated file back to the bytes written (Kafka's {@code FileRecords.trim}); nothing for a file
     * that never was preallocated or was trimmed already.
     */
    public void trim() {
        if (!preallocated) {
            return;
        }
        SharedChannel ch = acquire();
        try {
            ch.channel().truncate(size.get());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot trim " + file, e);
        } finally {
            ch.release();
        }
        preallocated = false;
    }

    /** Whether the file was created preallocated and is not trimmed yet. */
    public boolean preallocated() {
        return preallocated;
    }

    /** Cuts the file to {@code newSize} bytes. */
    public void truncateTo(int newSize) {
        if (newSize > size.get()) {
            throw new IllegalArgumentException("cannot truncate " + file + " of " + size + " bytes to " + newSize);
        }
        SharedChannel ch = acquire();
        try {
            ch.channel().truncate(newSize);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot truncate " + file, e);
        } finally {
            ch.release();
        }
        size.set(newSize);
        preallocated = false;
    }

    /** fsyncs the data written so far. */
    public void flush() {
        SharedChannel ch = acquire();
        try {
            ch.channel().force(true);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot flush " + file, e);
        } finally {
            ch.release();
        }
    }

    public synchronized void renameTo(Path target) throws IOException {
        Files.move(file, target, StandardCopyOption.ATOMIC_MOVE);
        file = target;
    }

    public void deleteIfExists() throws IOException {
        preallocated = false;
        closeHandle();
        Files.deleteIfExists(file);
    }

    @Override
    public void close() {
        closeHandle();
    }
}
