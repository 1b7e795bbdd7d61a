package io.cairn.log.index;

import io.cairn.log.io.FileLayer;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code .txnindex} file of a segment: the aborted transactions whose ABORT marker lies in the segment, so a
 * {@code read_committed} fetch can tell the consumer which records to drop. Kafka's format, one 34-byte entry per
 * aborted transaction, big-endian:
 * <pre>
 *  0 version          int16   0
 *  2 producerId       int64
 * 10 firstOffset      int64
 * 18 lastOffset       int64   offset of the ABORT marker
 * 26 lastStableOffset int64
 * </pre>
 * The file is created on the first abort. Thread-safety: {@code synchronized}; appended by the partition's writer.
 */
public final class TransactionIndex implements Closeable {

    public static final int ENTRY_SIZE = 34;

    private final FileLayer layer;
    private final long baseOffset;
    private Path file;
    private final List<AbortedTxn> entries = new ArrayList<>();
    private boolean loaded;

    public TransactionIndex(FileLayer layer, Path file, long baseOffset) {
        this.layer = layer;
        this.file = file;
        this.baseOffset = baseOffset;
    }

    public long baseOffset() {
        return baseOffset;
    }

    public synchronized Path file() {
        return file;
    }

    private void load() {
        if (loaded) {
            return;
        }
        loaded = true;
        if (!Files.exists(file)) {
            return;
        }
        try {
            ByteBuffer buf = ByteBuffer.wrap(Files.readAllBytes(file));
            while (buf.remaining() >= ENTRY_SIZE) {
                short version = buf.getShort();
                if (version != 0) {
                    break;
                }
                entries.add(new AbortedTxn(buf.getLong(), buf.getLong(), buf.getLong(), buf.getLong()));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }

    /** Appends an aborted transaction; last offsets must grow. */
    public synchronized void append(AbortedTxn txn) {
        load();
        if (!entries.isEmpty() && txn.lastOffset() < entries.get(entries.size() - 1).lastOffset()) {
            throw new IllegalArgumentException("aborted txn " + txn + " before the last one in " + file);
        }
        entries.add(txn);
        ByteBuffer buf = ByteBuffer.allocate(ENTRY_SIZE);
        buf.putShort((short) 0).putLong(txn.producerId()).putLong(txn.firstOffset()).putLong(txn.lastOffset())
            .putLong(txn.lastStableOffset()).flip();
        try (FileChannel ch = layer.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            long at = ch.size();
            while (buf.hasRemaining()) {
                at += ch.write(buf, at);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot append to " + file, e);
        }
    }

    public synchronized List<AbortedTxn> allAbortedTxns() {
        load();
        return List.copyOf(entries);
    }

    /** The aborted transactions that overlap [fetchOffset, upperBoundOffset). */
    public synchronized List<AbortedTxn> collectAbortedTxns(long fetchOffset, long upperBoundOffset) {
        load();
        List<AbortedTxn> out = new ArrayList<>();
        for (AbortedTxn txn : entries) {
            if (txn.lastOffset() >= fetchOffset && txn.firstOffset() < upperBoundOffset) {
                out.add(txn);
            }
        }
        return out;
    }

    /**
     * Adds to {@code out} the aborted transactions that overlap [fetchOffset, upperBoundOffset) and returns whether
     * the search is complete: an entry whose last stable offset reaches the bound proves that no later segment holds
     * the marker of a transaction that began below it (Kafka's {@code TxnIndexSearchResult.isComplete}).
     */
    public synchronized boolean collectAbortedTxns(long fetchOffset, long upperBoundOffset, List<AbortedTxn> out) {
        load();
        for (AbortedTxn txn : entries) {
            if (txn.lastOffset() >= fetchOffset && txn.firstOffset() < upperBoundOffset) {
                out.add(txn);
            }
            if (txn.lastStableOffset() >= upperBoundOffset) {
                return true;
            }
        }
        return false;
    }

    /**
     * Removes the entries whose marker is at or after {@code offset}. Entries are in marker order, so the ones kept
     * are a prefix of the file: it is truncated to their length and fsynced, never rewritten, so that no crash can
     * leave fewer entries than are kept (Kafka's {@code TransactionIndex.truncateTo}). Bytes past the kept entries
     * that are no entry (a torn append) go too.
     */
    public synchronized void truncateTo(long offset) {
        load();
        int kept = 0;
        while (kept < entries.size() && entries.get(kept).lastOffset() < offset) {
            kept++;
        }
        entries.subList(kept, entries.size()).clear();
        truncateFile((long) kept * ENTRY_SIZE);
    }

    /** Removes every entry: the file is truncated to nothing and fsynced (kept, as Kafka's {@code reset}). */
    public synchronized void reset() {
        load();
        entries.clear();
        truncateFile(0);
    }

    /** Shortens the file to {@code length} bytes and fsyncs it; a no-op when it is missing or not longer. */
    private void truncateFile(long length) {
        if (!Files.exists(file)) {
            return;
        }
        try (FileChannel ch = layer.open(file, StandardOpenOption.WRITE)) {
            if (ch.size() > length) {
                ch.truncate(length);
                ch.force(true);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot truncate " + file, e);
        }
    }

    public synchronized void flush() {
        if (!Files.exists(file)) {
            return;
        }
        try (FileChannel ch = layer.open(file, StandardOpenOption.WRITE)) {
            ch.force(true);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot flush " + file, e);
        }
    }

    public synchronized void renameTo(Path target) throws IOException {
        if (Files.exists(file)) {
            Files.move(file, target, StandardCopyOption.ATOMIC_MOVE);
        }
        file = target;
    }

    public synchronized void deleteIfExists() throws IOException {
        Files.deleteIfExists(file);
    }

    @Override
    public void close() {
        // No handle is kept open between appends.
    }
}
