package io.cairn.log.cleaner;

import io.cairn.log.LogConfig;
import io.cairn.log.LogEnvironment;
import io.cairn.log.PartitionLog;
import io.cairn.log.io.CheckpointFile;
import io.cairn.log.segment.FileBatch;
import io.cairn.log.segment.LogSegment;
import io.cairn.wire.record.Record;
import io.cairn.wire.record.RecordBatch;
import io.cairn.wire.record.RecordBatchBuilder;
import io.cairn.wire.record.TimestampType;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * One compaction pass over a partition (Kafka's {@code Cleaner}): maps the keys of the dirty part (from the
 * cleaner checkpoint to the first uncleanable offset) to their latest offsets in a bounded {@link OffsetMap}, up to
 * where the map fills (then the pass cleans only that far and checkpoints there, see {@link #clean}), then rewrites
 * each segment below that offset keeping, per key, only records at or after the mapped offset, and dropping
 * tombstones whose batch is older than {@code delete.retention.ms}. Offsets are preserved (a batch that loses
 * records is rebuilt with the same codec and base offset, base sequence and last offset); the active segment,
 * anything at or after the first open transaction or the high watermark, and segments younger than
 * {@code min.compaction.lag.ms} are never touched; a
 * pass runs only when the dirty ratio reaches {@code min.cleanable.dirty.ratio}, or when the first batch of a dirty
 * inactive segment is older than {@code max.compaction.lag.ms} (Kafka's {@code needCompactionNow}; the active segment
 * of a compacted log rolls that long after its first batch, {@link LogConfig#maxSegmentMs}). Each cleaned segment is
 * written to {@code .cleaned} files, renamed {@code .swap} and swapped in under the partition lock, so readers see
 * either the old or the new segment, both valid.
 *
 * <p>Transactions follow Kafka's cleaner ({@link CleanedTransactions}): keys of aborted transactions never enter
 * the offset map and their batches lose their records; a COMMIT or ABORT marker whose transaction has no batch left
 * is stamped with a delete horizon and removed once it passed, an ABORT marker's {@code .txnindex} entry going with
 * it. The last data batch of each active producer (or its marker, when that is its last entry) and the last batch
 * of the cleaned range are kept, emptied of records when none stays, so the producer's sequence and epoch survive
 * a reload or a truncation that rebuilds producer state from the log.
 *
 * <p>Tombstones follow KIP-534: the first clean that keeps a tombstone stamps its batch with a delete horizon
 * ({@code now + delete.retention.ms}, in baseTimestamp with attribute bit 6); a later clean after the horizon drops
 * it, so a consumer that reads the cleaned log within {@code delete.retention.ms} still sees every delete.
 * Deviation from Kafka, on purpose: segments are cleaned one-to-one (not grouped into fewer segments).
 *
 * <p>Thread-safety: one cleaner per partition at a time (the {@link LogCleaner} guarantees it); appends and reads
 * go on concurrently.
 */
public final class Cleaner {

    public static final String CHECKPOINT_FILE = "cleaner-offset-checkpoint";
    private static final Logger LOGGER = LogManager.getLogger(Cleaner.class);
    /** The compression codec bits of a batch's attributes. */
    private static final int COMPRESSION_CODEC_MASK = 0x07;

    private final Throttler throttler;
    private final Buffers buffers;

    /** A cleaner with Kafka's default buffers for one thread. */
    public Cleaner(Throttler throttler) {
        this(throttler, Buffers.perThread(Buffers.DEFAULT_DEDUPE_BUFFER_SIZE, Buffers.DEFAULT_LOAD_FACTOR,
            Buffers.DEFAULT_IO_BUFFER_SIZE, 1));
    }

    public Cleaner(Throttler throttler, Buffers buffers) {
        this.throttler = throttler;
        this.buffers = buffers;
        // fail now, not at the first pass, when not even one key fits (Kafka's require in its Cleaner)
        if (buffers.mapCapacity() < 1) {
            throw new IllegalArgumentException(OffsetMap.tooSmall(buffers.dedupeBytes(), buffers.loadFactor()));
        }
    }

    /**
     * The memory of one cleaner thread (Kafka's {@code Cleaner} arguments): its offset map takes at most
     * {@code dedupeBytes}, filled to {@code loadFactor}; it reads through a buffer of {@code readBufferBytes}.
     *
     * @param dedupeBytes     {@code log.cleaner.dedupe.buffer.size / log.cleaner.threads}
     * @param loadFactor      {@code log.cleaner.io.buffer.load.factor}
     * @param readBufferBytes {@code log.cleaner.io.buffer.size / log.cleaner.threads / 2} (Kafka splits it into a
     *                        read and a write buffer)
     */
    public record Buffers(long dedupeBytes, double loadFactor, int readBufferBytes) {

        /** Kafka's {@code log.cleaner.dedupe.buffer.size} default: 128 MiB. */
        public static final long DEFAULT_DEDUPE_BUFFER_SIZE = 128L * 1024 * 1024;
        /** Kafka's {@code log.cleaner.io.buffer.load.factor} default. */
        public static final double DEFAULT_LOAD_FACTOR = 0.9;
        /** Kafka's {@code log.cleaner.io.buffer.size} default: 512 KiB. */
        public static final int DEFAULT_IO_BUFFER_SIZE = 512 * 1024;

        /** One thread's share of the cleaner's buffers, as Kafka's {@code CleanerThread} splits them. */
        public static Buffers perThread(long dedupeBufferSize, double loadFactor, int ioBufferSize, int threads) {
            int n = Math.max(1, threads);
            return new Buffers(Math.min(dedupeBufferSize / n, Integer.MAX_VALUE), loadFactor,
                ioBufferSize / n / 2);
        }

        /** The keys one thread's offset map holds (Kafka's slots times the load factor). */
        public int mapCapacity() {
            return OffsetMap.capacityOf(dedupeBytes, loadFactor);
        }
    }

    /** What one pass did. */
    public record CleanResult(long firstDirtyOffset, long endOffset, int segmentsCleaned, long bytesRead,
                              long bytesWritten, long recordsRemoved) {
    }

    /**
     * The cleanable part of a log and how dirty it is; {@code compactionDelayMs}: how long past
     * {@code max.compaction.lag.ms} its oldest dirty batch is (Kafka's {@code maxCompactionDelay}), 0 when none is.
     */
    public record Cleanable(List<LogSegment> segments, long firstDirtyOffset, long endOffset, double dirtyRatio,
                            long compactionDelayMs) {

        /** A part no record of which is overdue. */
        public Cleanable(List<LogSegment> segments, long firstDirtyOffset, long endOffset, double dirtyRatio) {
            this(segments, firstDirtyOffset, endOffset, dirtyRatio, 0L);
        }

        /**
         * Kafka's test of a log to clean: dirty enough ({@code min.cleanable.dirty.ratio}), or holding a dirty record
         * older than {@code max.compaction.lag.ms} ({@code needCompactionNow}), whatever the ratio.
         */
        public boolean due(LogConfig config) {
            return compactionDelayMs > 0 || dirtyRatio >= config.minCleanableDirtyRatio();
        }
    }

    /** The segments a pass may rewrite, or empty when there is nothing to clean. */
    public static Optional<Cleanable> cleanable(PartitionLog log) {
        LogConfig config = log.config();
        if (!config.compact()) {
            return Optional.empty();
        }
        List<LogSegment> all = new ArrayList<>(log.segments());
        // Kafka's firstUncleanableDirtyOffset: the active segment and the last stable offset, which the high
        // watermark bounds; a record superseded only above the high watermark stays for consumers and for a truncation
        long bound = Math.min(all.get(all.size() - 1).baseOffset(), log.highWatermark());
        long unstable = log.firstUnstableOffset();
        if (unstable >= 0) {
            bound = Math.min(bound, unstable);
        }
        long now = log.time().milliseconds();
        List<LogSegment> cleanable = new ArrayList<>();
        for (int i = 0; i + 1 < all.size(); i++) {
            LogSegment s = all.get(i);
            boolean young = config.minCompactionLagMs() > 0 && now - s.largestTimestamp() < config.minCompactionLagMs();
            if (young || all.get(i + 1).baseOffset() > bound) {
                break;
            }
            cleanable.add(s);
        }
        if (cleanable.isEmpty()) {
            return Optional.empty();
        }
        long end = all.get(cleanable.size()).baseOffset();
        long firstDirty = Math.max(readCheckpoint(log.dir()), log.logStartOffset());
        if (firstDirty >= end) {
            return Optional.empty();
        }
        long clean = 0;
        long dirty = 0;
        for (int i = 0; i < cleanable.size(); i++) {
            long next = all.get(i + 1).baseOffset();
            if (next <= firstDirty) {
                clean += cleanable.get(i).size();
            } else {
                dirty += cleanable.get(i).size();
            }
        }
        double ratio = clean + dirty == 0 ? 0.0 : (double) dirty / (clean + dirty);
        return Optional.of(new Cleanable(cleanable, firstDirty, end, ratio,
            compactionDelayMs(all, firstDirty, config.maxCompactionLagMs(), now)));
    }

    /**
     * Kafka's {@code LogCleanerManager.maxCompactionDelay}: how long ago the oldest first-batch timestamp of the
     * dirty inactive segments (those from the one holding {@code firstDirty} to the active one, timestamps above 0)
     * passed {@code now - maxCompactionLagMs}; 0 when it did not.
     */
    static long compactionDelayMs(List<LogSegment> all, long firstDirty, long maxCompactionLagMs, long now) {
        long earliest = Long.MAX_VALUE;
        for (int i = 0; i + 1 < all.size(); i++) {
            if (all.get(i + 1).baseOffset() <= firstDirty) {
                continue; // wholly below the dirty part
            }
            long first = all.get(i).firstBatchTimestamp();
            if (first > 0) {
                earliest = Math.min(earliest, first);
            }
        }
        long cleanUntil = now - Math.max(maxCompactionLagMs, 0L);
        return earliest < cleanUntil ? cleanUntil - earliest : 0L;
    }

    /**
     * Cleans when the dirty ratio reaches {@code min.cleanable.dirty.ratio} or a dirty record is older than
     * {@code max.compaction.lag.ms}.
     */
    public Optional<CleanResult> cleanIfNeeded(PartitionLog log) {
        Optional<Cleanable> target = cleanable(log);
        if (target.isEmpty() || !target.get().due(log.config())) {
            return Optional.empty();
        }
        return Optional.of(clean(log, target.get()));
    }

    /**
     * Cleans the given part unconditionally, or its first part when the offset map fills before the end of the
     * dirty range (Kafka's {@code buildOffsetMap}): mapping stops at the first key that does not fit, the pass
     * cleans the segments below the offset after the last one mapped, keeps every record from that offset on as it
     * is, and checkpoints there, so the next pass goes on from there. A first segment with more keys than the map
     * holds is thus cleaned in parts, never skipped.
     */
    public CleanResult clean(PartitionLog log, Cleanable target) {
        OffsetMap map = new OffsetMap(buffers.dedupeBytes(), buffers.loadFactor());
        BatchReader reader = new BatchReader(buffers.readBufferBytes());
        long[] bytesRead = {0};
        // Kafka's buildOffsetMap: keys of aborted transactions never enter the map, so they supersede nothing
        CleanedTransactions mapTxns = new CleanedTransactions();
        mapTxns.addAborted(CleanedTransactions.abortedBetween(log.segments(), target.firstDirtyOffset(),
            target.endOffset()));
        List<LogSegment> all = new ArrayList<>(log.segments());
        // the offset after the last one mapped (Kafka's latestOffset + 1)
        long[] mappedEnd = {target.firstDirtyOffset()};
        boolean[] full = {false};
        for (LogSegment s : target.segments()) {
            int at = all.indexOf(s);
            long upper = at >= 0 && at + 1 < all.size() ? all.get(at + 1).baseOffset() : target.endOffset();
            if (upper <= target.firstDirtyOffset()) {
                continue;
            }
            bytesRead[0] += reader.forEachBatch(s, (batch, bytes) -> {
                if (batch.lastOffset() < target.firstDirtyOffset()) {
                    return true;
                }
                RecordBatch view = RecordBatch.of(bytes, 0);
                if (batch.isControl()) {
                    mapTxns.onControlBatch(view.producerId(), batch.lastOffset(), controlType(bytes), txn -> { });
                } else if (!mapTxns.onDataBatch(view.producerId(), view.isTransactional(), batch.lastOffset())) {
                    for (Record r : decode(bytes)) {
                        if (r.offset() >= target.firstDirtyOffset() && r.hasKey()) {
                            if (!map.put(r.keyBuffer(), r.offset())) {
                                full[0] = true;
                                return false;
                            }
                            mappedEnd[0] = r.offset() + 1;
                        }
                    }
                }
                mappedEnd[0] = Math.max(mappedEnd[0], batch.lastOffset() + 1);
                return true;
            });
            if (full[0]) {
                break;
            }
            // offsets missing at the end of a segment belong to the mapped range too
            mappedEnd[0] = Math.max(mappedEnd[0], Math.min(upper, target.endOffset()));
        }
        long endOffset = full[0] ? mappedEnd[0] : target.endOffset();
        if (full[0]) {
            LOGGER.info("[Cleaner partition={}] Offset map full ({} keys): cleaning offsets [{}, {}) of the dirty "
                + "range [{}, {}) in this pass", log.dir().getFileName(), map.size(), target.firstDirtyOffset(),
                endOffset, target.firstDirtyOffset(), target.endOffset());
        }
        long now = log.time().milliseconds();
        long horizon = now + log.config().deleteRetentionMs();
        long written = 0;
        long removed = 0;
        int cleaned = 0;
        Pass pass = new Pass(map, now, horizon, new CleanedTransactions(), log.lastRecordsOfActiveProducers(),
            endOffset);
        for (LogSegment s : target.segments()) {
            if (s.baseOffset() >= endOffset) {
                break;
            }
            int at = all.indexOf(s);
            long upper = at >= 0 && at + 1 < all.size() ? all.get(at + 1).baseOffset() : target.endOffset();
            pass.txns().addAborted(CleanedTransactions.abortedBetween(all, s.baseOffset(), upper));
            long[] stats = cleanSegment(log, s, pass, reader);
            written += stats[0];
            removed += stats[1];
            bytesRead[0] += s.size();
            cleaned += stats[2];
        }
        writeCheckpoint(log, endOffset);
        LOGGER.info("[Cleaner partition={}] Cleaned offsets [{}, {}): {} segment(s), {} bytes read, {} written, "
            + "{} record(s) removed", log.dir().getFileName(), target.firstDirtyOffset(), endOffset, cleaned,
            bytesRead[0], written, removed);
        return new CleanResult(target.firstDirtyOffset(), endOffset, cleaned, bytesRead[0], written, removed);
    }

    /**
     * The state of one cleaning pass over its segments, in offset order (Kafka's {@code cleanSegments}): the offset
     * map, the clock and the horizon a tombstone or removable marker gets, the transactions walked so far, the last
     * records of active producers (whose batches stay, emptied if need be) and the end of the cleanable range (its
     * last batch stays too, so the last offset is not lost).
     */
    private record Pass(OffsetMap map, long now, long horizon, CleanedTransactions txns,
                        Map<Long, PartitionLog.ProducerLastRecord> lastRecords, long endOffset) {
    }

    /** Returns {bytes written, records removed, 1 if swapped in}. */
    private long[] cleanSegment(PartitionLog log, LogSegment source, Pass pass, BatchReader reader) {
        LogEnvironment env = log.environment();
        LogConfig config = log.config();
        Path dir = log.dir();
        String stem = LogSegment.fileName(source.baseOffset());
        long[] stats = new long[3];
        LogSegment cleaned = null;
        try {
            for (String suffix : new String[] {LogSegment.LOG_SUFFIX, LogSegment.INDEX_SUFFIX,
                LogSegment.TIME_INDEX_SUFFIX, LogSegment.TXN_INDEX_SUFFIX}) {
                Files.deleteIfExists(dir.resolve(stem + suffix + LogSegment.CLEANED_SUFFIX));
            }
            LogSegment.Options options = new LogSegment.Options(env.layer(), env.handles(), env.mappings(),
                config.segmentIndexBytes(), config.indexIntervalBytes(), 0L, log.time().milliseconds());
            cleaned = LogSegment.open(dir, source.baseOffset(), options, true, LogSegment.CLEANED_SUFFIX);
            LogSegment target = cleaned;
            List<io.cairn.log.index.AbortedTxn> keptAborts = new ArrayList<>();
            reader.forEachBatch(source, (batch, bytes) -> {
                ByteBuffer kept = filter(batch, bytes, pass, keptAborts::add, stats);
                if (kept != null && kept.hasRemaining()) {
                    stats[0] += kept.remaining();
                    target.append(kept);
                }
                throttler.maybeThrottle(batch.sizeInBytes());
                return true;
            });
            // an ABORT marker that stays keeps its index entry; one removed takes it along (Kafka's cleanedIndex)
            for (var txn : keptAborts) {
                cleaned.appendAbortedTxn(txn);
            }
            cleaned.onBecomeInactive();
            cleaned.flush();
            cleaned.changeFileSuffixes(LogSegment.CLEANED_SUFFIX, LogSegment.SWAP_SUFFIX);
            if (log.replaceSegment(source, cleaned)) {
                stats[2] = 1;
            } else {
                cleaned.close();
                cleaned.deleteIfExists();
            }
            return stats;
        } catch (IOException | UncheckedIOException e) {
            // Kafka's cleaner takes the directory offline on an I/O error; the leftover .cleaned files go at the
            // next start's recovery
            if (cleaned != null) {
                cleaned.releaseResources();
            }
            throw log.failed("cannot clean segment " + stem, e);
        }
    }

    /**
     * The bytes to keep of one batch: the batch itself, a rebuilt one, an emptied one, or {@code null} (Kafka's
     * {@code cleanInto} filter). A batch of an aborted transaction loses its records; a marker whose transaction has
     * no batch left is stamped with the delete horizon, then removed once it passed; the last data batch of an active
     * producer, the producer's marker when that is its last entry, and the last batch of the range are kept, with no
     * records when none stays, so the producer's sequence and epoch and the last offset survive.
     */
    private static ByteBuffer filter(FileBatch batch, ByteBuffer bytes, Pass pass,
                                     java.util.function.Consumer<io.cairn.log.index.AbortedTxn> keptAborts,
                                     long[] stats) {
        RecordBatch view = RecordBatch.of(bytes, 0);
        long producerId = view.producerId();
        if (batch.baseOffset() >= pass.endOffset()) {
            // beyond what this pass mapped (the map filled): kept as it is, an ABORT marker with its index entry,
            // for the next pass to clean
            if (batch.isControl()) {
                pass.txns().onUntouchedControlBatch(producerId, batch.lastOffset(), controlType(bytes), keptAborts);
            } else {
                pass.txns().onDataBatch(producerId, view.isTransactional(), batch.lastOffset());
            }
            return bytes;
        }
        long now = pass.now();
        OffsetMap map = pass.map();
        boolean control = batch.isControl();
        boolean stamped = view.hasDeleteHorizonMs();
        long existingHorizon = stamped ? view.baseTimestamp() : -1L;
        boolean canDiscard = control
            ? pass.txns().onControlBatch(producerId, batch.lastOffset(), controlType(bytes), keptAborts)
            : pass.txns().onDataBatch(producerId, view.isTransactional(), batch.lastOffset());
        boolean discardRecords = control ? canDiscard && stamped && now >= existingHorizon : canDiscard;
        boolean retainEmpty = producerId >= 0 && isLastRecordOfProducer(view, batch, pass)
            || batch.lastOffset() + 1 == pass.endOffset();
        if (discardRecords) {
            stats[1] += view.recordCount();
            return retainEmpty ? emptied(bytes) : null;
        }
        if (control) {
            if (canDiscard && !stamped && view.recordCount() > 0) {
                return rebuild(bytes, decode(bytes), pass.horizon());
            }
            return bytes;
        }
        long newHorizon = pass.horizon();
        List<Record> records = decode(bytes);
        List<Record> retained = new ArrayList<>(records.size());
        boolean keptTombstone = false;
        for (Record r : records) {
            if (!r.hasKey() || r.offset() >= pass.endOffset()) {
                retained.add(r);
                continue;
            }
            boolean superseded = map.get(r.keyBuffer()) > r.offset();
            boolean expiredTombstone = !r.hasValue() && stamped && now >= existingHorizon;
            if (!superseded && !expiredTombstone) {
                retained.add(r);
                keptTombstone |= !r.hasValue();
            }
        }
        stats[1] += records.size() - retained.size();
        boolean needsHorizon = keptTombstone && !stamped;
        if (retained.isEmpty()) {
            // Kafka's DELETE_EMPTY: a batch left without records goes, unless it must stay for what it records
            return !retainEmpty ? null : records.isEmpty() ? bytes : emptied(bytes);
        }
        if (retained.size() == records.size() && !needsHorizon) {
            return bytes;
        }
        long horizon = stamped ? existingHorizon : needsHorizon ? newHorizon : -1L;
        return rebuild(bytes, retained, horizon);
    }

    private static ByteBuffer rebuild(ByteBuffer original, List<Record> retained, long deleteHorizonMs) {
        RecordBatch view = RecordBatch.of(original, 0);
        RecordBatchBuilder builder = new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT,
            view.compressionType())
            .baseOffset(view.baseOffset())
            .partitionLeaderEpoch(view.partitionLeaderEpoch())
            .transactional(view.isTransactional())
            .control(view.isControlBatch());
        long producerId = view.producerId();
        if (producerId >= 0) {
            // the base offset stays, so the base sequence stays with it
            builder.producer(producerId, view.producerEpoch(), view.baseSequence());
        }
        if (view.timestampType() == TimestampType.LOG_APPEND_TIME) {
            builder.logAppendTime(view.maxTimestamp());
        }
        if (deleteHorizonMs >= 0) {
            builder.deleteHorizonMs(deleteHorizonMs);
        }
        for (Record r : retained) {
            builder.appendWithOffset(r.offset(), r.timestamp(), r.key(), r.value(), r.headers());
        }
        ByteBuf built = builder.build();
        try {
            ByteBuffer out = ByteBuffer.allocate(built.readableBytes());
            built.getBytes(built.readerIndex(), out);
            out.flip();
            // Kafka's filterTo keeps the original last offset, so the batch's last sequence survives the clean
            out.putInt(RecordBatch.LAST_OFFSET_DELTA_OFFSET, view.lastOffsetDelta());
            rewriteCrc(out);
            return out;
        } finally {
            built.release();
        }
    }

    /** The batch's header with no records (Kafka's {@code writeEmptyHeader}): offsets, producer and epoch stay. */
    private static ByteBuffer emptied(ByteBuffer original) {
        int size = RecordBatch.RECORD_BATCH_OVERHEAD;
        ByteBuffer out = ByteBuffer.allocate(size);
        out.put(original.duplicate().limit(original.position() + size)).flip();
        out.putInt(RecordBatch.LENGTH_OFFSET, size - RecordBatch.LOG_OVERHEAD);
        out.putShort(RecordBatch.ATTRIBUTES_OFFSET,
            (short) (RecordBatch.of(original, 0).attributes() & ~COMPRESSION_CODEC_MASK));
        out.putInt(RecordBatch.RECORDS_COUNT_OFFSET, 0);
        rewriteCrc(out);
        return out;
    }

    /** Recomputes the CRC32C of a batch (attributes to the end). */
    private static void rewriteCrc(ByteBuffer batch) {
        batch.putInt(RecordBatch.CRC_OFFSET, (int) RecordBatch.of(batch, 0).computeChecksum());
    }

    /** The control type of a control batch's marker, or -1 when it has no record (emptied by an earlier clean). */
    private static short controlType(ByteBuffer bytes) {
        if (RecordBatch.of(bytes, 0).recordCount() == 0) {
            return -1;
        }
        ByteBuffer key = decode(bytes).get(0).keyBuffer();
        return key.remaining() >= 4 ? key.getShort(key.position() + 2) : -1;
    }

    /**
     * Kafka's {@code isBatchLastRecordOfProducer}: the batch holds the last data offset of an active producer, or,
     * when the producer's last entry is a marker, it is a marker of the producer's current epoch.
     */
    private static boolean isLastRecordOfProducer(RecordBatch view, FileBatch batch, Pass pass) {
        PartitionLog.ProducerLastRecord last = pass.lastRecords().get(view.producerId());
        if (last == null) {
            return false;
        }
        if (last.lastDataOffset() >= 0) {
            return batch.lastOffset() == last.lastDataOffset();
        }
        return batch.isControl() && view.producerEpoch() == last.producerEpoch();
    }

    private static List<Record> decode(ByteBuffer batch) {
        return RecordBatch.of(batch, batch.position()).records();
    }

    /**
     * Reads the batches of segments through one buffer of {@code log.cleaner.io.buffer.size} per thread (half of
     * it, the other half being Kafka's write buffer), as Kafka's cleaner reads: a chunk at a time, each batch handed
     * on as a slice of the buffer, valid until the visitor returns. A batch larger than the buffer grows it for that
     * batch (appends bound a batch by {@code max.message.bytes}), and the buffer shrinks back after the segment.
     * Not thread-safe: one per pass.
     */
    private static final class BatchReader {

        private final int size;
        private ByteBuffer buffer;

        BatchReader(int size) {
            this.size = Math.max(size, RecordBatch.RECORD_BATCH_OVERHEAD);
            this.buffer = ByteBuffer.allocate(this.size);
        }

        /** Calls {@code visitor} for every batch of the segment until it returns false; returns the bytes read. */
        long forEachBatch(LogSegment segment, BatchVisitor visitor) {
            int end = segment.size();
            int position = 0;
            try {
                while (end - position >= RecordBatch.RECORD_BATCH_OVERHEAD) {
                    buffer.clear();
                    buffer.limit(Math.min(buffer.capacity(), end - position));
                    segment.log().readInto(buffer, position);
                    int read = buffer.position();
                    int at = 0;
                    while (read - at >= RecordBatch.RECORD_BATCH_OVERHEAD) {
                        int batchSize = RecordBatch.of(buffer, at).sizeInBytes();
                        if (batchSize < RecordBatch.RECORD_BATCH_OVERHEAD || batchSize > end - position - at) {
                            return position + at;
                        }
                        if (batchSize > read - at) {
                            break;
                        }
                        FileBatch batch = new FileBatch(position + at,
                            buffer.slice(at, RecordBatch.RECORD_BATCH_OVERHEAD));
                        if (!visitor.visit(batch, buffer.slice(at, batchSize))) {
                            return position + at;
                        }
                        at += batchSize;
                    }
                    if (at == 0) {
                        if (read < RecordBatch.RECORD_BATCH_OVERHEAD
                            || RecordBatch.of(buffer, 0).sizeInBytes() <= buffer.capacity()) {
                            return position; // a short read: the file ends before its size said
                        }
                        // Kafka's growBuffers: one batch larger than the buffer
                        buffer = ByteBuffer.allocate(RecordBatch.of(buffer, 0).sizeInBytes());
                        continue;
                    }
                    position += at;
                }
                return position;
            } finally {
                if (buffer.capacity() > size) {
                    buffer = ByteBuffer.allocate(size);
                }
            }
        }
    }

    @FunctionalInterface
    private interface BatchVisitor {
        /** Returns false to stop at this batch. */
        boolean visit(FileBatch batch, ByteBuffer bytes);
    }

    static long readCheckpoint(Path dir) {
        List<String> entries = CheckpointFile.readEntries(dir.resolve(CHECKPOINT_FILE), 0);
        return entries.isEmpty() ? -1L : Long.parseLong(entries.get(0).trim());
    }

    private static void writeCheckpoint(PartitionLog log, long offset) {
        try {
            CheckpointFile.writeEntries(log.environment().layer(), log.dir().resolve(CHECKPOINT_FILE), 0,
                List.of(Long.toString(offset)));
        } catch (UncheckedIOException e) {
            throw log.failed("cannot write the cleaner checkpoint", e);
        }
    }
}
