package io.cairn.log.segment;

import io.cairn.log.FetchDataInfo;
import io.cairn.log.FileSlice;
import io.cairn.log.LogOffsetMetadata;
import io.cairn.log.index.AbortedTxn;
import io.cairn.log.index.OffsetIndex;
import io.cairn.log.index.OffsetPosition;
import io.cairn.log.index.TimeIndex;
import io.cairn.log.index.TimestampOffset;
import io.cairn.log.index.TransactionIndex;
import io.cairn.log.io.FileLayer;
import io.cairn.log.io.OpenResources;
import io.cairn.wire.record.RecordBatch;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * One segment of a partition: the {@code .log} file of batches starting at {@code baseOffset}, its offset, time
 * and transaction indexes (Kafka's {@code LogSegment}). Files are named by the base offset in 20 digits.
 *
 * <p>Thread-safety: appends, truncation, recovery and roll come from the partition's single writer (under
 * {@code PartitionLog}'s lock); reads and lookups from any thread. The index-related counters below are only
 * touched by the writer; {@code maxTimestampSoFar} is volatile because retention reads it.
 */
public final class LogSegment implements AutoCloseable {

    public static final String LOG_SUFFIX = ".log";
    public static final String INDEX_SUFFIX = ".index";
    public static final String TIME_INDEX_SUFFIX = ".timeindex";
    public static final String TXN_INDEX_SUFFIX = ".txnindex";
    public static final String DELETED_SUFFIX = ".deleted";
    public static final String CLEANED_SUFFIX = ".cleaned";
    public static final String SWAP_SUFFIX = ".swap";

    private final long baseOffset;
    private final FileRecords log;
    private final OffsetIndex offsetIndex;
    private final TimeIndex timeIndex;
    private final TransactionIndex txnIndex;
    private final int indexIntervalBytes;
    private final long rollJitterMs;
    private final long createdMs;
    private int bytesSinceLastIndexEntry;
    /** Written by the writer (append, recover, truncate); read by retention and ListOffsets threads. */
    private volatile TimestampOffset maxTimestampSoFar;
    private volatile long rollingBasedTimestamp = -1L;

    LogSegment(long baseOffset, FileRecords log, OffsetIndex offsetIndex, TimeIndex timeIndex,
               TransactionIndex txnIndex, int indexIntervalBytes, long rollJitterMs, long createdMs) {
        this.baseOffset = baseOffset;
        this.log = log;
        this.offsetIndex = offsetIndex;
        this.timeIndex = timeIndex;
        this.txnIndex = txnIndex;
        this.indexIntervalBytes = indexIntervalBytes;
        this.rollJitterMs = rollJitterMs;
        this.createdMs = createdMs;
    }

    /**
     * Settings a segment needs when it is opened; {@code preallocateBytes}: the length a new active segment's log
     * file is created at ({@code segment.bytes} with {@code preallocate}), 0 for none.
     */
    public record Options(FileLayer layer, OpenResources handles, OpenResources mappings, int maxIndexSize,
                          int indexIntervalBytes, long rollJitterMs, long nowMs, int preallocateBytes) {

        /** Options that preallocate no log file. */
        public Options(FileLayer layer, OpenResources handles, OpenResources mappings, int maxIndexSize,
                       int indexIntervalBytes, long rollJitterMs, long nowMs) {
            this(layer, handles, mappings, maxIndexSize, indexIntervalBytes, rollJitterMs, nowMs, 0);
        }
    }

    /**
     * Opens (creating when missing) the segment at {@code baseOffset} in {@code dir}; {@code active} preallocates
     * the indexes, and a new log file when the options say so.
     */
    public static LogSegment open(Path dir, long baseOffset, Options options, boolean active) throws IOException {
        return open(dir, baseOffset, options, active, "");
    }

    /** Opens a segment whose files carry an extra suffix such as {@code .cleaned}. */
    public static LogSegment open(Path dir, long baseOffset, Options options, boolean active, String suffix)
        throws IOException {
        String name = fileName(baseOffset);
        FileRecords log = new FileRecords(options.layer(), dir.resolve(name + LOG_SUFFIX + suffix),
            options.handles(), active ? options.preallocateBytes() : 0);
        OffsetIndex offsetIndex = new OffsetIndex(options.layer(), dir.resolve(name + INDEX_SUFFIX + suffix),
            baseOffset, options.maxIndexSize(), active);
        TimeIndex timeIndex = new TimeIndex(options.layer(), dir.resolve(name + TIME_INDEX_SUFFIX + suffix),
            baseOffset, options.maxIndexSize(), active);
        offsetIndex.useBudget(options.mappings());
        timeIndex.useBudget(options.mappings());
        TransactionIndex txnIndex = new TransactionIndex(options.layer(),
            dir.resolve(name + TXN_INDEX_SUFFIX + suffix), baseOffset);
        return new LogSegment(baseOffset, log, offsetIndex, timeIndex, txnIndex, options.indexIntervalBytes(),
            options.rollJitterMs(), options.nowMs());
    }

    /** Kafka's file name: the base offset left-padded with zeros to 20 digits. */
    public static String fileName(long offset) {
        return String.format("%020d", offset);
    }

    public long baseOffset() {
        return baseOffset;
    }

    public FileRecords log() {
        return log;
    }

    public OffsetIndex offsetIndex() {
        return offsetIndex;
    }

    public TimeIndex timeIndex() {
        return timeIndex;
    }

    public TransactionIndex txnIndex() {
        return txnIndex;
    }

    public int size() {
        return log.sizeInBytes();
    }

    public long rollJitterMs() {
        return rollJitterMs;
    }

    /**
     * Appends validated batches that sit in {@code batches} from its position to its limit; offsets are already
     * assigned. Adds index entries every {@code index.interval.bytes}. Returns the file position of the first.
     */
    public int append(ByteBuffer batches) {
        List<RecordBatch> views = new ArrayList<>();
        for (int at = batches.position(); at < batches.limit(); ) {
            RecordBatch batch = RecordBatch.of(batches, at);
            views.add(batch);
            at += batch.sizeInBytes();
        }
        return append(batches, views);
    }

    /**
     * As {@link #append(ByteBuffer)}, with {@code views}: one view per batch of {@code batches}, in order (the
     * appender's own, so that the batches are not walked again here).
     */
    public int append(ByteBuffer batches, List<RecordBatch> views) {
        // The bytes first: a write that fails (a full disk) leaves the indexes and the largest timestamp as they
        // were, with no entry pointing at bytes the log does not have.
        int start = log.append(batches);
        int position = start;
        TimestampOffset max = maxTimestampSoFar();
        for (int i = 0; i < views.size(); i++) {
            RecordBatch batch = views.get(i);
            long batchMax = batch.maxTimestamp();
            long lastOffset = batch.lastOffset();
            if (rollingBasedTimestamp < 0 && start == 0 && i == 0) {
                rollingBasedTimestamp = batchMax;
            }
            if (batchMax > max.timestamp()) {
                max = new TimestampOffset(batchMax, lastOffset);
            }
            if (bytesSinceLastIndexEntry > indexIntervalBytes) {
                offsetIndex.append(lastOffset, position);
                timeIndex.maybeAppend(max.timestamp(), max.offset());
                bytesSinceLastIndexEntry = 0;
            }
            int size = batch.sizeInBytes();
            bytesSinceLastIndexEntry += size;
            position += size;
        }
        maxTimestampSoFar = max;
        return start;
    }

    /** The largest batch max timestamp in the segment and the last offset of that batch, (-1, base) if none. */
    public TimestampOffset maxTimestampSoFar() {
        TimestampOffset max = maxTimestampSoFar;
        if (max == null) {
            max = timeIndex.lastEntry();
            maxTimestampSoFar = max;
        }
        return max;
    }

    /** The time retention compares: the max timestamp, or the creation time when no batch has one. */
    public long largestTimestamp() {
        long max = maxTimestampSoFar().timestamp();
        return max >= 0 ? max : createdMs;
    }

    /**
     * How long the segment has been waiting to roll (Kafka's rule): from its first batch's timestamp to the incoming
     * batch's {@code messageTimestamp}, or from its creation to now when it has no timestamped batch.
     */
    public long timeWaitedForRoll(long nowMs, long messageTimestamp) {
        long base = firstBatchTimestamp();
        return base >= 0 ? messageTimestamp - base : nowMs - createdMs;
    }

    /**
     * The max timestamp of the segment's first batch (Kafka's {@code getFirstBatchTimestamp}), or -1 when the
     * segment is empty or that batch has no timestamp.
     */
    public long firstBatchTimestamp() {
        long base = rollingBasedTimestamp;
        if (base < 0 && log.sizeInBytes() > 0) {
            FileBatch first = log.batchAt(0, log.sizeInBytes());
            base = first == null ? -1L : first.maxTimestamp();
            rollingBasedTimestamp = base;
        }
        return base;
    }

    /**
     * Whether appending {@code bytes} bytes ending at {@code lastOffset}, whose largest timestamp is
     * {@code maxTimestamp}, needs a new segment first.
     */
    public boolean shouldRoll(int segmentBytes, long segmentMs, int bytes, long lastOffset, long maxTimestamp,
                              long nowMs) {
        boolean full = (long) size() + bytes > segmentBytes;
        boolean old = size() > 0 && timeWaitedForRoll(nowMs, maxTimestamp) > segmentMs - rollJitterMs;
        boolean overflow = lastOffset - baseOffset > Integer.MAX_VALUE;
        return (size() > 0 && full) || old || offsetIndex.isFull() || timeIndex.isFull() || overflow;
    }

    /**
     * The first batch whose last offset is at least {@code offset}, scanning from the offset index's hint, or
     * {@code null} when the segment has none.
     */
    public FileBatch translateOffset(long offset) {
        return translateOffset(offset, log.sizeInBytes());
    }

    FileBatch translateOffset(long offset, int end) {
        OffsetPosition hint = offsetIndex.lookup(offset);
        int position = hint.position();
        while (true) {
            FileBatch batch = log.batchAt(position, end);
            if (batch == null) {
                return null;
            }
            if (batch.lastOffset() >= offset) {
                return batch;
            }
            position = batch.endPosition();
        }
    }

    /**
     * Reads from the batch holding {@code startOffset}, at most {@code maxSize} bytes and not past
     * {@code maxPosition}; with {@code minOneMessage} the first batch is returned whole even if it is larger
     * (Kafka's rule for the first partition of a fetch). Returns {@code null} when the offset is beyond the segment.
     */
    public FetchDataInfo read(long startOffset, int maxSize, int maxPosition, boolean minOneMessage) {
        FileBatch first = translateOffset(startOffset);
        if (first == null) {
            return null;
        }
        LogOffsetMetadata meta = new LogOffsetMetadata(startOffset, baseOffset, first.position());
        int adjustedMax = minOneMessage ? Math.max(maxSize, first.sizeInBytes()) : maxSize;
        int length = Math.min(maxPosition - first.position(), adjustedMax);
        if (length <= 0) {
            return new FetchDataInfo(meta, FileSlice.empty(), false, List.of());
        }
        return new FetchDataInfo(meta, log.slice(first.position(), length), adjustedMax < first.sizeInBytes(),
            List.of());
    }

    /** The offset after the last batch, or the base offset for an empty segment. */
    public long readNextOffset() {
        int end = log.sizeInBytes();
        int position = offsetIndex.lastEntry().position();
        long next = baseOffset;
        while (true) {
            FileBatch batch = log.batchAt(position, end);
            if (batch == null) {
                return next;
            }
            next = batch.nextOffset();
            position = batch.endPosition();
        }
    }

    /**
     * Removes every batch from the one holding {@code offset} on, and the index entries that point there.
     * Returns the number of bytes removed.
     */
    public int truncateTo(long offset) {
        FileBatch batch = translateOffset(offset);
        offsetIndex.truncateTo(offset);
        timeIndex.truncateTo(offset);
        txnIndex.truncateTo(offset);
        if (batch == null) {
            return 0;
        }
        int removed = log.sizeInBytes() - batch.position();
        log.truncateTo(batch.position());
        maxTimestampSoFar = timeIndex.lastEntry();
        bytesSinceLastIndexEntry = 0;
        if (log.sizeInBytes() == 0) {
            rollingBasedTimestamp = -1L;
        }
        return removed;
    }

    /**
     * Rebuilds the indexes by scanning every batch, stops at the first one that is torn or invalid (size, magic,
     * CRC32C, offsets not increasing) and truncates the file there. Each valid batch is passed to
     * {@code onBatch} (producer state, leader epochs). Returns the number of bytes truncated.
     */
    public int recover(java.util.function.Consumer<ByteBuffer> onBatch) {
        resetForRecovery();
        int end = log.sizeInBytes();
        int position = 0;
        long nextOffset = baseOffset;
        while (position < end) {
            FileBatch batch = log.batchAt(position, end);
            if (batch == null) {
                break;
            }
            ByteBuffer whole = log.readBatch(batch);
            if (!isValidStoredBatch(whole, nextOffset)) {
                break;
            }
            indexRecovered(batch);
            onBatch.accept(whole);
            nextOffset = batch.nextOffset();
            position = batch.endPosition();
        }
        int truncated = end - position;
        if (truncated > 0) {
            log.truncateTo(position);
        }
        return truncated;
    }

    private boolean isValidStoredBatch(ByteBuffer batch, long minBaseOffset) {
        int size = batch.remaining();
        if (size < RecordBatch.RECORD_BATCH_OVERHEAD) {
            return false;
        }
        RecordBatch view = RecordBatch.of(batch, batch.position());
        if (view.sizeInBytes() != size || !view.isValid()) {
            return false;
        }
        long base = view.baseOffset();
        int delta = view.lastOffsetDelta();
        return base >= minBaseOffset && delta >= 0 && base + delta - baseOffset <= Integer.MAX_VALUE;
    }

    /** Resets the indexes before a recovery scan re-adds them batch by batch. */
    void resetForRecovery() {
        offsetIndex.reset();
        timeIndex.reset();
        txnIndex.reset();
        maxTimestampSoFar = new TimestampOffset(-1L, baseOffset);
        bytesSinceLastIndexEntry = 0;
    }

    /** Re-adds the index entries of one batch found by a recovery scan at {@code position}. */
    void indexRecovered(FileBatch batch) {
        TimestampOffset max = maxTimestampSoFar();
        if (batch.maxTimestamp() > max.timestamp()) {
            max = new TimestampOffset(batch.maxTimestamp(), batch.lastOffset());
            maxTimestampSoFar = max;
        }
        if (bytesSinceLastIndexEntry > indexIntervalBytes) {
            offsetIndex.append(batch.lastOffset(), batch.position());
            timeIndex.maybeAppend(max.timestamp(), max.offset());
            bytesSinceLastIndexEntry = 0;
        }
        bytesSinceLastIndexEntry += batch.sizeInBytes();
    }

    public void appendAbortedTxn(AbortedTxn txn) {
        txnIndex.append(txn);
    }

    /** Called on roll: records the final max timestamp and trims the log file and the indexes to their entries. */
    public void onBecomeInactive() {
        log.trim();
        TimestampOffset max = maxTimestampSoFar();
        if (max.timestamp() >= 0 && !timeIndex.isFull()) {
            timeIndex.maybeAppend(max.timestamp(), max.offset());
        }
        offsetIndex.trimToValidSize();
        timeIndex.trimToValidSize();
    }

    /** Makes a loaded segment the active one again: indexes grow back to their preallocated size. */
    public void onBecomeActive(int maxIndexSize) {
        offsetIndex.makeWritable(maxIndexSize);
        timeIndex.makeWritable(maxIndexSize);
    }

    /** fsyncs the log and the indexes. */
    public void flush() {
        log.flush();
        offsetIndex.flush();
        timeIndex.flush();
        txnIndex.flush();
    }

    /** Renames all files by adding (or replacing) a suffix such as {@code .deleted}. */
    public void changeFileSuffixes(String oldSuffix, String newSuffix) throws IOException {
        log.renameTo(swapSuffix(log.file(), oldSuffix, newSuffix));
        offsetIndex.renameTo(swapSuffix(offsetIndex.file(), oldSuffix, newSuffix));
        timeIndex.renameTo(swapSuffix(timeIndex.file(), oldSuffix, newSuffix));
        txnIndex.renameTo(swapSuffix(txnIndex.file(), oldSuffix, newSuffix));
    }

    private static Path swapSuffix(Path file, String oldSuffix, String newSuffix) {
        String name = file.getFileName().toString();
        String stem = oldSuffix.isEmpty() ? name : name.substring(0, name.length() - oldSuffix.length());
        return file.resolveSibling(stem + newSuffix);
    }

    /** Releases the handle and mappings; they reopen on the next use. */
    public void releaseResources() {
        log.closeHandle();
        offsetIndex.release();
        timeIndex.release();
    }

    public void deleteIfExists() throws IOException {
        log.deleteIfExists();
        offsetIndex.deleteIfExists();
        timeIndex.deleteIfExists();
        txnIndex.deleteIfExists();
    }

    @Override
    public void close() {
        offsetIndex.close();
        timeIndex.close();
        txnIndex.close();
        log.close();
    }

    @Override
    public String toString() {
        return "LogSegment(baseOffset=" + baseOffset + ", size=" + size() + ")";
    }
}
