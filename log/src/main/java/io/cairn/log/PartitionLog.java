package io.cairn.log;

import io.cairn.log.epoch.EpochEntry;
import io.cairn.log.epoch.LeaderEpochCache;
import io.cairn.log.index.AbortedTxn;
import io.cairn.log.producer.ActiveProducer;
import io.cairn.log.producer.BatchMetadata;
import io.cairn.log.producer.ProducerSnapshots;
import io.cairn.log.producer.ProducerStateManager;
import io.cairn.log.producer.VerificationGuard;
import io.cairn.log.recovery.LogLoader;
import io.cairn.log.segment.LogSegment;
import io.cairn.wire.error.KafkaStorageException;
import io.cairn.wire.error.OffsetOutOfRangeException;
import io.cairn.wire.protocol.Uuid;
import io.cairn.wire.record.RecordBatch;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The log of one partition in {@code <log.dir>/<topic>-<partition>/} (Kafka's {@code UnifiedLog} over
 * {@code LocalLog}): leader and follower appends, reads that return zero-copy file slices, offset lookups for
 * ListOffsets, roll, truncation, flush and durable group commit, retention, and the leader-epoch and producer
 * state that come with them.
 *
 * <p>Thread-safety: thread-safe. Appends, roll, truncation, retention and compaction swaps take {@link #lock};
 * reads take no lock: they see the segment map (a concurrent skip list) and the published end offset
 * ({@code volatile}), and a segment's bytes become visible only after they are written. Durable appends wait for
 * the group commit outside the lock, so many appenders share one fsync.
 */
public final class PartitionLog implements Closeable {

    private static final Logger LOGGER = LogManager.getLogger(PartitionLog.class);
    /**
     * How often flushes write the offsets checkpoint at most: Kafka's default
     * {@code log.flush.offset.checkpoint.interval.ms} (which Cairn reports as a key it does not act on).
     */
    static final long OFFSETS_CHECKPOINT_MS = 60_000L;

    private final Path dir;
    private final String topic;
    private final int partition;
    private final LogEnvironment env;
    private final ReentrantLock lock = new ReentrantLock();
    private final ConcurrentSkipListMap<Long, LogSegment> segments;
    private final LeaderEpochCache epochs;
    private final ProducerStateManager producers;
    private final GroupCommit groupCommit;
    private final LeaderAppender appender;
    private final String logPrefix;
    /** {@code topic-partition}, as the append errors name it. */
    private final String topicPartitionName;
    /** Swapped by {@link #updateConfig}; read by every operation. */
    private volatile LogConfig config;
    /** Written under {@link #lock} after the bytes are in the segment; read by readers without a lock. */
    private volatile LogOffsetMetadata endOffsetMetadata;
    /** Written under {@link #lock} (DeleteRecords, retention); read by readers. */
    private volatile long logStartOffset;
    private volatile long highWatermark = Long.MAX_VALUE;
    /** Offsets below it are fsynced with their indexes; written under {@link #lock}. */
    private volatile long recoveryPoint;
    /** When the recovery point last moved (Kafka's {@code LocalLog.lastFlushTime}); {@code flush.ms} counts from it. */
    private volatile long lastFlushMs;
    /** When the offsets checkpoint was last written; written and read under {@link #lock}. */
    private long offsetsCheckpointedMs;
    private volatile boolean closed;

    private PartitionLog(Path dir, LogConfig config, LogEnvironment env, LogLoader.Loaded loaded,
                         LeaderEpochCache epochs, ProducerStateManager producers) {
        this.producers = producers;
        this.dir = dir;
        String name = LogDirNames.partitionNameOf(dir.getFileName().toString());
        int dash = name.lastIndexOf('-');
        this.topic = dash > 0 ? name.substring(0, dash) : name;
        this.partition = dash > 0 ? parsePartition(name.substring(dash + 1)) : 0;
        this.topicPartitionName = topic + "-" + partition;
        this.env = env;
        this.config = config;
        this.segments = loaded.segments();
        this.epochs = epochs;
        this.logStartOffset = loaded.logStartOffset();
        this.recoveryPoint = loaded.recoveryPoint();
        LogSegment active = segments.lastEntry().getValue();
        this.endOffsetMetadata = new LogOffsetMetadata(loaded.logEndOffset(), active.baseOffset(), active.size());
        this.groupCommit = new GroupCommit(loaded.logEndOffset());
        this.appender = new LeaderAppender(this);
        this.lastFlushMs = env.time().milliseconds();
        this.offsetsCheckpointedMs = lastFlushMs;
        this.logPrefix = "[PartitionLog partition=" + name + (LogDirNames.isFuture(dir.getFileName().toString())
            ? " future" : "") + " dir=" + dir.getParent() + "] ";
    }

    private static int parsePartition(String text) {
        try {
            return Integer.parseInt(text);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /**
     * Opens (creating when missing) the log in {@code dir}. After an unclean shutdown the segments from the
     * recovery point on are scanned and repaired first.
     */
    public static PartitionLog open(Path dir, LogConfig config, LogEnvironment env, boolean hadCleanShutdown) {
        // Kafka creates no log in an offline directory
        env.health().ensureOnline("[PartitionLog dir=" + dir + "] ");
        try {
            java.nio.file.Files.createDirectories(dir);
            LeaderEpochCache epochs = new LeaderEpochCache(env.layer(), dir);
            ProducerStateManager producers = new ProducerStateManager();
            LogLoader.Loaded loaded = LogLoader.load(dir, config, env, hadCleanShutdown, epochs, producers);
            PartitionLog log = new PartitionLog(dir, config, env, loaded, epochs, producers);
            LogLoader.writeOffsets(env, dir, log.recoveryPoint, log.logStartOffset);
            LOGGER.info("{}Loaded log with {} segment(s), log start offset {}, log end offset {}{}", log.logPrefix,
                log.segments.size(), log.logStartOffset, log.logEndOffset(),
                loaded.recovered() ? " after recovery" : "");
            return log;
        } catch (IOException | UncheckedIOException e) {
            throw env.health().fail(dir.getParent(), "cannot open log " + dir, e);
        }
    }

    public Path dir() {
        return dir;
    }

    public String topic() {
        return topic;
    }

    public int partition() {
        return partition;
    }

    /** {@code topic-partition}. */
    String topicPartitionName() {
        return topicPartitionName;
    }

    public LogConfig config() {
        return config;
    }

    /** Applies new topic settings; the active segment keeps its jitter and size. */
    public void updateConfig(LogConfig newConfig) {
        this.config = newConfig;
    }

    LogEnvironment env() {
        return env;
    }

    /** The shared clock, file layer and bounds this log uses (the cleaner opens segments with them). */
    public LogEnvironment environment() {
        return env;
    }

    /** The log's clock. */
    public Time time() {
        return env.time();
    }

    ReentrantLock lock() {
        return lock;
    }

    ProducerStateManager producers() {
        return producers;
    }

    LeaderEpochCache epochs() {
        return epochs;
    }

    String logPrefix() {
        return logPrefix;
    }

    public long logStartOffset() {
        return logStartOffset;
    }

    /**
     * The high watermark replication has reached, as {@code isr.Partition} last set it; {@link Long#MAX_VALUE} for a
     * log that no partition manages (then nothing bounds retention by it). Retention never deletes a segment that
     * holds offsets at or above it (Kafka's {@code deletableSegments}), so a leader keeps what its followers lack.
     */
    public long highWatermark() {
        return highWatermark;
    }

    /** Records the partition's high watermark (see {@link #highWatermark()}); called by the partition that owns it. */
    public void updateHighWatermark(long offset) {
        highWatermark = offset;
    }

    public long logEndOffset() {
        return endOffsetMetadata.messageOffset();
    }

    public LogOffsetMetadata logEndOffsetMetadata() {
        return endOffsetMetadata;
    }

    public long recoveryPoint() {
        return recoveryPoint;
    }

    /** Offsets below it are on disk (durable mode: acknowledged appends; otherwise: the last flush). */
    public long flushedOffset() {
        return Math.max(groupCommit.flushedOffset(), recoveryPoint);
    }

    public int latestEpoch() {
        return epochs.latestEpoch();
    }

    public List<EpochEntry> epochEntries() {
        return epochs.epochEntries();
    }

    /** The first offset of the oldest open transaction, or -1. */
    public long firstUnstableOffset() {
        lock.lock();
        try {
            return producers.firstUnstableOffset();
        } finally {
            lock.unlock();
        }
    }

    /** The state of every producer the partition remembers (DescribeProducers), copied under the lock. */
    public List<ActiveProducer> activeProducers() {
        lock.lock();
        try {
            return producers.snapshotActiveProducers();
        } finally {
            lock.unlock();
        }
    }

    /** Segments in offset order (a live view). */
    public Collection<LogSegment> segments() {
        return segments.values();
    }

    public int numberOfSegments() {
        return segments.size();
    }

    /** Bytes of all segments. */
    public long size() {
        long total = 0;
        for (LogSegment s : segments.values()) {
            total += s.size();
        }
        return total;
    }

    LogSegment activeSegment() {
        return segments.lastEntry().getValue();
    }

    ConcurrentSkipListMap<Long, LogSegment> segmentMap() {
        return segments;
    }

    /** Writes the topic id to {@code partition.metadata}. */
    public void writeTopicId(Uuid topicId) {
        try {
            PartitionMetadataFile.write(env.layer(), dir, topicId);
        } catch (UncheckedIOException e) {
            throw failed("cannot write " + PartitionMetadataFile.FILE_NAME, e);
        }
    }

    public Optional<Uuid> topicId() {
        return PartitionMetadataFile.read(dir);
    }

    /**
     * Appends a produce request's batches as leader: validates them, assigns offsets from the log end offset by
     * rewriting each batch's base offset and partition leader epoch (outside the CRC, in place in
     * {@code records}), and appends. In durable mode returns only after the bytes are fsynced.
     *
     * <p>Each batch goes through {@code LogValidator} (Kafka's rules; it may be rebuilt for the topic's
     * {@code compression.type}). Failures are {@code io.cairn.wire.error} exceptions, as Kafka's:
     * {@code CorruptRecordException}, {@code InvalidRecordException}, {@code RecordTooLargeException},
     * {@code RecordBatchTooLargeException} (larger than {@code segment.bytes}), {@code InvalidTimestampException},
     * {@code OutOfOrderSequenceException}, {@code InvalidProducerEpochException}; record-level refusals are a
     * {@link RecordValidationException} carrying the KIP-467 record errors.
     */
    public LogAppendInfo appendAsLeader(ByteBuffer records, int leaderEpoch, AppendOrigin origin) {
        return appendAsLeader(records, leaderEpoch, origin, null);
    }

    /**
     * As {@link #appendAsLeader(ByteBuffer, int, AppendOrigin)} for a broker that verifies transactions (KIP-890): a
     * transactional batch that would start a transaction here must carry the guard of
     * {@link #maybeStartTransactionVerification} that is still current, else {@code InvalidTxnStateException}; null
     * asks for no verification.
     */
    public LogAppendInfo appendAsLeader(ByteBuffer records, int leaderEpoch, AppendOrigin origin,
                                        VerificationGuard verification) {
        LogAppendInfo info = appender.appendAsLeader(records, leaderEpoch, origin, verification);
        afterAppend(info);
        return info;
    }

    /**
     * Appends batches fetched from the leader with their offsets. Rejects an overlap with the log and, unless the
     * topic is compacted (where cleaned leaders have gaps), a gap after the log end offset.
     */
    public LogAppendInfo appendAsFollower(ByteBuffer records) {
        LogAppendInfo info = appender.appendAsFollower(records);
        afterAppend(info);
        return info;
    }

    private void afterAppend(LogAppendInfo info) {
        // flush.messages: Kafka's UnifiedLog.append flushes when LocalLog.unflushedMessages, the log end offset minus
        // the recovery point, reaches it. Each appender checks after its own append and flushes itself, so the append
        // that reaches the count returns only once flushed, and messages that arrive during a flush still count.
        if (logEndOffset() - recoveryPoint >= config.flushMessages()) {
            flush(logEndOffset());
        }
        if (config.durable() && !info.duplicate() && info.recordCount() > 0) {
            groupCommit.awaitFlushed(info.lastOffset() + 1, this::flushData);
        }
        enforceBudgets();
    }

    private void enforceBudgets() {
        env.handles().enforce();
        env.mappings().enforce();
    }

    /**
     * Marks this log's directory failed because {@code what} failed with {@code cause} (see {@link LogDirHealth}):
     * the directory takes no more writes. Returns the {@code KAFKA_STORAGE_ERROR} for the caller to throw. For the
     * writes of this log's files made outside it too (the cleaner's).
     */
    public KafkaStorageException failed(String what, Throwable cause) {
        return env.health().fail(dir.getParent(), logPrefix + what, cause);
    }

    /**
     * Called by the appender under the lock: writes validated batches, rolling first when needed.
     * {@code maxTimestamp} is the largest batch max timestamp of {@code records} (time-based roll compares it).
     */
    void appendValidated(ByteBuffer records, List<RecordBatch> views, long firstOffset, long lastOffset,
                         int recordCount, long maxTimestamp) {
        env.health().ensureOnline(logPrefix);
        LogSegment active = maybeRoll(records.remaining(), lastOffset, maxTimestamp);
        try {
            active.append(records.duplicate(), views);
        } catch (UncheckedIOException e) {
            throw failed("cannot append offsets " + firstOffset + " to " + lastOffset + " to " + active, e);
        }
        try {
            for (int i = 0; i < views.size(); i++) {
                RecordBatch batch = views.get(i);
                epochs.assign(batch.partitionLeaderEpoch(), batch.baseOffset());
                ProducerStateManager.CompletedTxn txn = producers.update(batch);
                if (txn != null && txn.aborted()) {
                    active.appendAbortedTxn(new AbortedTxn(txn.producerId(), txn.firstOffset(), txn.lastOffset(),
                        producers.lastStableOffsetAfter(txn.lastOffset())));
                }
            }
        } catch (UncheckedIOException e) {
            // the leader-epoch checkpoint or the transaction index: the bytes are in, the log end did not move
            throw failed("cannot record the leader epochs and transactions of offsets " + firstOffset + " to "
                + lastOffset, e);
        }
        endOffsetMetadata = new LogOffsetMetadata(lastOffset + 1, active.baseOffset(), active.size());
    }

    private LogSegment maybeRoll(int bytes, long lastOffset, long maxTimestamp) {
        LogSegment active = activeSegment();
        LogConfig cfg = config;
        if (active.shouldRoll(cfg.segmentBytes(), cfg.maxSegmentMs(), bytes, lastOffset, maxTimestamp,
                env.time().milliseconds())) {
            return roll();
        }
        return active;
    }

    /**
     * Starts a new segment at the log end offset. The old one is trimmed, and fsynced in the background when the
     * environment has a scheduler (Kafka's asynchronous flush on roll), else at once; the recovery point moves to
     * the new base offset only after that fsync.
     */
    public LogSegment roll() {
        lock.lock();
        try {
            env.health().ensureOnline(logPrefix);
            LogSegment old = activeSegment();
            long newBase = logEndOffset();
            if (old.baseOffset() == newBase && old.size() == 0) {
                return old;
            }
            old.onBecomeInactive();
            LogConfig cfg = config;
            long jitter = cfg.segmentJitterMs() > 0 ? ThreadLocalRandom.current().nextLong(cfg.segmentJitterMs()) : 0;
            LogSegment.Options options = new LogSegment.Options(env.layer(), env.handles(), env.mappings(),
                cfg.segmentIndexBytes(), cfg.indexIntervalBytes(), jitter, env.time().milliseconds(),
                cfg.initFileSize());
            LogSegment fresh = LogSegment.open(dir, newBase, options, true);
            segments.put(newBase, fresh);
            ProducerSnapshots.write(env.layer(), dir, newBase, producers);
            endOffsetMetadata = new LogOffsetMetadata(newBase, newBase, 0);
            LOGGER.info("{}Rolled new segment at offset {}", logPrefix, newBase);
            if (env.scheduler() == null) {
                flushRolled(old, newBase);
            } else {
                env.scheduler().execute(() -> flushRolledInBackground(old, newBase));
            }
            return fresh;
        } catch (IOException | UncheckedIOException e) {
            throw failed("cannot roll", e);
        } finally {
            lock.unlock();
        }
    }

    /** fsyncs the log data of the unflushed segments (group commit); returns the offset covered. */
    private long flushData() {
        env.health().ensureOnline(logPrefix);
        long upTo = logEndOffset();
        long from = groupCommit.flushedOffset();
        Map.Entry<Long, LogSegment> first = segments.floorEntry(from);
        Collection<LogSegment> dirty = first == null ? segments.values() : segments.tailMap(first.getKey()).values();
        try {
            for (LogSegment s : dirty) {
                s.log().flush();
            }
        } catch (UncheckedIOException e) {
            throw failed("cannot fsync the log data up to offset " + upTo, e);
        }
        return upTo;
    }

    /**
     * Flushes everything below {@code offset} (log and indexes) and moves the recovery point there. The fsyncs run
     * without the partition lock, so appends go on meanwhile; only the recovery-point update takes it.
     */
    public void flush(long offset) {
        long target;
        List<LogSegment> dirty = new ArrayList<>();
        lock.lock();
        try {
            target = Math.min(offset, logEndOffset());
            if (target <= recoveryPoint) {
                return;
            }
            Map.Entry<Long, LogSegment> first = segments.floorEntry(recoveryPoint);
            for (LogSegment s : first == null ? segments.values() : segments.tailMap(first.getKey()).values()) {
                if (s.baseOffset() < target) {
                    dirty.add(s);
                }
            }
        } finally {
            lock.unlock();
        }
        for (LogSegment s : dirty) {
            try {
                flushSegment(s);
            } catch (UncheckedIOException e) {
                if (segments.get(s.baseOffset()) == s) {
                    throw failed("cannot flush " + s, e);
                }
                // deleted or swapped meanwhile: nothing left to make durable
            }
        }
        lock.lock();
        try {
            if (target > recoveryPoint && target <= logEndOffset()) {
                recoveryPoint = target;
                lastFlushMs = env.time().milliseconds();
                groupCommit.advance(target);
                maybeCheckpointOffsets(lastFlushMs);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Writes the offsets checkpoint for a flush when its last write is {@link #OFFSETS_CHECKPOINT_MS} old,
     * as Kafka writes recovery points every {@code log.flush.offset.checkpoint.interval.ms} rather than on each flush:
     * with {@code flush.messages=1} the checkpoint (a file written, fsynced, renamed and its directory fsynced) cost
     * more than the flush itself. An older recovery point on disk costs a crash more recovery, never data: recovery
     * scans from the segment that holds it. A roll, a truncation, a move of the log start offset and {@link #close}
     * still write it at once. Called under {@link #lock}.
     */
    private void maybeCheckpointOffsets(long nowMs) {
        if (nowMs - offsetsCheckpointedMs >= OFFSETS_CHECKPOINT_MS) {
            checkpointOffsets();
        }
    }

    /** Writes the recovery point and the log start offset to the offsets checkpoint now. Called under {@link #lock}. */
    private void checkpointOffsets() {
        try {
            LogLoader.writeOffsets(env, dir, recoveryPoint, logStartOffset);
        } catch (UncheckedIOException e) {
            throw failed("cannot write the offsets checkpoint", e);
        }
        offsetsCheckpointedMs = env.time().milliseconds();
    }

    /**
     * fsyncs a segment that was just rolled (log and trimmed indexes), then moves the recovery point to the new
     * segment's base. The background flushes of several rolls may run at once on the shared background threads, and
     * a later one may finish first: so first every segment before the rolled one that is not flushed yet is (Kafka's
     * {@code flushUptoOffsetExclusive} flushes from the recovery point too), and the recovery point never passes a
     * segment that is not durable.
     */
    private void flushRolled(LogSegment old, long newBase) {
        flush(old.baseOffset());
        try {
            flushSegment(old);
        } catch (UncheckedIOException e) {
            if (segments.get(old.baseOffset()) == old) {
                throw failed("cannot flush " + old, e);
            }
            // deleted or swapped meanwhile: nothing left to make durable
        }
        lock.lock();
        try {
            if (newBase > recoveryPoint && newBase <= logEndOffset()) {
                recoveryPoint = newBase;
                // Kafka's markFlushed: any move of the recovery point restarts the flush.ms clock
                lastFlushMs = env.time().milliseconds();
                groupCommit.advance(newBase);
                checkpointOffsets();
            }
        } finally {
            lock.unlock();
        }
        if (!lock.isHeldByCurrentThread()) {
            enforceBudgets();
        }
    }

    /** Flushes one segment, timed for the flush listener (Kafka's {@code LogFlushStats}). */
    private void flushSegment(LogSegment segment) {
        long start = env.time().nanoseconds();
        try {
            segment.flush();
        } finally {
            env.flushListener().onSegmentFlushed(env.time().nanoseconds() - start);
        }
    }

    private void flushRolledInBackground(LogSegment old, long newBase) {
        try {
            if (!closed) {
                flushRolled(old, newBase);
            }
        } catch (RuntimeException e) {
            if (!closed) {
                LOGGER.error("{}Background flush of segment {} failed", logPrefix, old.baseOffset(), e);
            }
        }
    }

    /** Flushes when {@code flush.ms} has passed since the last flush; called by the log manager's scheduler. */
    public void maybeFlushByTime() {
        LogConfig cfg = config;
        if (cfg.flushMs() == Long.MAX_VALUE || logEndOffset() <= recoveryPoint) {
            return;
        }
        if (env.time().milliseconds() - lastFlushMs >= cfg.flushMs()) {
            flush(logEndOffset());
        }
    }

    /**
     * Reads from {@code fetchOffset}: at most {@code maxBytes} (but a whole first batch when {@code minOneMessage}),
     * never at or beyond {@code maxOffset} (exclusive; the high watermark for consumers, {@code Long.MAX_VALUE} for
     * replicas). An offset inside a batch returns that whole batch. The caller closes the result.
     *
     * @throws OffsetOutOfRangeException below the log start offset or above the log end offset
     */
    public FetchDataInfo read(long fetchOffset, int maxBytes, long maxOffset, boolean minOneMessage) {
        try {
            return LogReads.read(this, fetchOffset, maxBytes, maxOffset, minOneMessage);
        } finally {
            enforceBudgets();
        }
    }

    /**
     * As {@link #read}, bounded by the last stable offset, and also lists the aborted transactions that overlap the
     * records read (read_committed; Kafka's {@code addAbortedTransactions}): the bound is the offset index's first
     * entry past the bytes read (else the next segment's base, the log end), never the last stable offset itself, so
     * a small fetch far below a long run of aborts lists only its own. An aborted transaction is indexed in the
     * segment of its ABORT marker, so the scan starts at the fetch's segment and goes on until an entry's last stable
     * offset shows that no later marker can belong to a transaction begun below the bound.
     */
    public FetchDataInfo readCommitted(long fetchOffset, int maxBytes, long lastStableOffset) {
        return readCommitted(fetchOffset, maxBytes, lastStableOffset, true);
    }

    /**
     * {@link #readCommitted(long, int, long)} under the response's byte budget: without {@code minOneMessage} a
     * first batch larger than {@code maxBytes} is not returned (KIP-74: only the first partition of a response with
     * data may exceed the limits). A read that returns no records lists no aborted transactions, as Kafka's.
     */
    public FetchDataInfo readCommitted(long fetchOffset, int maxBytes, long lastStableOffset, boolean minOneMessage) {
        FetchDataInfo info = read(fetchOffset, maxBytes, lastStableOffset, minOneMessage);
        if (info.records().length() == 0) {
            return new FetchDataInfo(info.fetchOffsetMetadata(), info.records(), info.firstEntryIncomplete(),
                List.of());
        }
        List<AbortedTxn> aborted = new ArrayList<>();
        LogOffsetMetadata start = info.fetchOffsetMetadata();
        LogSegment read = segments.get(start.segmentBaseOffset());
        long upperBound = read == null ? -1L : read.offsetIndex().fetchUpperBoundOffset(
            start.relativePositionInSegment(), info.records().length());
        if (upperBound < 0) {
            Long next = segments.higherKey(start.segmentBaseOffset());
            upperBound = next != null ? next : logEndOffset();
        }
        upperBound = Math.min(upperBound, lastStableOffset);
        Long from = segments.floorKey(fetchOffset);
        for (LogSegment s : segments.tailMap(from == null ? segments.firstKey() : from, true).values()) {
            if (s.txnIndex().collectAbortedTxns(fetchOffset, upperBound, aborted)) {
                break;
            }
        }
        return new FetchDataInfo(info.fetchOffsetMetadata(), info.records(), info.firstEntryIncomplete(),
            List.copyOf(aborted));
    }

    /**
     * ListOffsets: {@link TimestampAndOffset#EARLIEST_TIMESTAMP}, {@code LATEST_TIMESTAMP}, {@code MAX_TIMESTAMP},
     * {@code EARLIEST_LOCAL_TIMESTAMP}, or a timestamp (the first record at or after it). Empty when no record
     * qualifies.
     */
    public Optional<TimestampAndOffset> fetchOffsetByTimestamp(long timestamp) {
        try {
            return LogReads.offsetByTimestamp(this, timestamp);
        } finally {
            enforceBudgets();
        }
    }

    /**
     * Removes everything at and after {@code targetOffset} (a follower diverged from the leader). Whole segments
     * go, the segment holding the offset is cut at the batch that holds it, indexes, epochs and producer state
     * follow.
     */
    public void truncateTo(long targetOffset) {
        lock.lock();
        try {
            env.health().ensureOnline(logPrefix);
            if (targetOffset >= logEndOffset()) {
                return;
            }
            if (targetOffset <= segments.firstKey()) {
                truncateFullyAndStartAt(Math.max(targetOffset, 0L));
                return;
            }
            LOGGER.info("{}Truncating to offset {} (log end offset {})", logPrefix, targetOffset, logEndOffset());
            while (segments.lastKey() >= targetOffset) {
                deleteSegmentNow(segments.pollLastEntry().getValue());
            }
            LogSegment active = activeSegment();
            active.onBecomeActive(config.segmentIndexBytes());
            active.truncateTo(targetOffset);
            afterTruncation(active.readNextOffset());
        } catch (UncheckedIOException e) {
            throw failed("cannot truncate to offset " + targetOffset, e);
        } finally {
            lock.unlock();
        }
    }

    /** Deletes every segment and starts an empty log at {@code newOffset}. */
    public void truncateFullyAndStartAt(long newOffset) {
        lock.lock();
        try {
            env.health().ensureOnline(logPrefix);
            LOGGER.info("{}Truncating fully and starting at offset {}", logPrefix, newOffset);
            List<LogSegment> all = new ArrayList<>(segments.values());
            LogConfig cfg = config;
            LogSegment.Options options = new LogSegment.Options(env.layer(), env.handles(), env.mappings(),
                cfg.segmentIndexBytes(), cfg.indexIntervalBytes(), 0L, env.time().milliseconds(),
                cfg.initFileSize());
            for (LogSegment s : all) {
                segments.remove(s.baseOffset());
                deleteSegmentNow(s);
            }
            segments.put(newOffset, LogSegment.open(dir, newOffset, options, true));
            logStartOffset = newOffset;
            epochs.clear();
            afterTruncation(newOffset);
        } catch (IOException | UncheckedIOException e) {
            throw failed("cannot truncate", e);
        } finally {
            lock.unlock();
        }
    }

    private void afterTruncation(long newEnd) {
        LogSegment active = activeSegment();
        endOffsetMetadata = new LogOffsetMetadata(newEnd, active.baseOffset(), active.size());
        epochs.truncateFromEnd(newEnd);
        recoveryPoint = Math.min(recoveryPoint, newEnd);
        logStartOffset = Math.min(logStartOffset, newEnd);
        groupCommit.reset(Math.min(groupCommit.flushedOffset(), newEnd));
        ProducerSnapshots.deleteAfter(dir, newEnd);
        // From the latest producer snapshot at or below the new end, not the whole log (this runs under the log's
        // lock, and a follower truncates with its partition and fetcher locks held too).
        LogLoader.rebuildProducerState(dir, segments, logStartOffset, newEnd, producers);
        checkpointOffsets();
    }

    /**
     * DeleteRecords: moves the log start offset to {@code newStart} (persisted); segments wholly below it are
     * deleted by the next retention pass. Returns the new log start offset.
     */
    public long deleteRecordsBefore(long newStart) {
        lock.lock();
        try {
            if (newStart > logEndOffset()) {
                throw new OffsetOutOfRangeException("cannot delete records before " + newStart
                    + " beyond the log end offset " + logEndOffset());
            }
            if (newStart > logStartOffset) {
                logStartOffset = newStart;
                epochs.truncateFromStart(newStart);
                checkpointOffsets();
            }
            return logStartOffset;
        } catch (UncheckedIOException e) {
            throw failed("cannot move the log start offset to " + newStart, e);
        } finally {
            lock.unlock();
        }
    }

    /**
     * One retention pass: deletes whole old segments by {@code retention.ms}, {@code retention.bytes} and the log
     * start offset. The pass chooses and unlinks its segments under the lock, as Kafka's
     * {@code UnifiedLog.deleteOldSegments} does, so an append cannot land in a segment between the choice and the
     * deletion; files are renamed {@code .deleted} and removed after {@code file.delete.delay.ms}, outside it.
     * Returns the number of segments deleted.
     */
    public int deleteOldSegments() {
        lock.lock();
        try {
            return io.cairn.log.retention.RetentionPolicy.apply(this);
        } finally {
            lock.unlock();
        }
    }

    /** Whether the calling thread holds the log lock (retention checks it runs under the lock). */
    public boolean isLockedByCurrentThread() {
        return lock.isHeldByCurrentThread();
    }

    /** Unlinks {@code victims} (oldest first, none the active segment) and moves the log start offset past them. */
    public void unlinkSegments(List<LogSegment> victims, String reason) {
        if (victims.isEmpty()) {
            return;
        }
        lock.lock();
        try {
            for (LogSegment s : victims) {
                if (s == activeSegment() || segments.get(s.baseOffset()) != s) {
                    continue;
                }
                segments.remove(s.baseOffset());
                Map.Entry<Long, LogSegment> next = segments.firstEntry();
                long newStart = next.getKey();
                if (newStart > logStartOffset) {
                    logStartOffset = newStart;
                }
                LOGGER.info("{}Deleting segment {} ({})", logPrefix, s.baseOffset(), reason);
                scheduleDelete(s);
            }
            epochs.truncateFromStart(logStartOffset);
            ProducerSnapshots.deleteBefore(dir, segments.firstKey());
            checkpointOffsets();
        } catch (UncheckedIOException e) {
            throw failed("cannot move the log start offset to " + logStartOffset, e);
        } finally {
            lock.unlock();
        }
    }

    private void scheduleDelete(LogSegment s) {
        try {
            s.changeFileSuffixes("", LogSegment.DELETED_SUFFIX);
        } catch (IOException e) {
            throw failed("cannot rename " + s, e);
        }
        long delay = config.fileDeleteDelayMs();
        if (env.scheduler() == null || delay <= 0) {
            deleteSegmentNow(s);
        } else {
            env.scheduler().schedule(() -> deleteSegmentNow(s), delay, TimeUnit.MILLISECONDS);
        }
    }

    void deleteSegmentNow(LogSegment s) {
        try {
            s.close();
            s.deleteIfExists();
        } catch (IOException e) {
            throw failed("cannot delete " + s, e);
        }
    }

    /**
     * Swaps a cleaned segment in for {@code old} (compaction), under the lock: the old files are renamed
     * {@code .deleted} and removed after {@code file.delete.delay.ms}, the cleaned one's {@code .swap} files take
     * their names, and the directory is fsynced so the swap survives a crash (as Kafka's {@code replaceSegments}). A
     * crash in between is completed by the loader ({@code .swap} wins, {@code .deleted} goes). So that a power cut
     * can never keep the old segment's {@code .deleted} name and lose the {@code .swap} one (its replacement would
     * then be a {@code .cleaned} leftover, deleted too), the directory is first fsynced with the {@code .swap} names,
     * before the lock (Kafka's {@code Utils.flushDir} after its {@code .swap} renames, KAFKA-13123).
     * Returns false, changing nothing, when {@code old} is no longer in the log (retention or truncation won).
     */
    public boolean replaceSegment(LogSegment old, LogSegment cleaned) {
        try {
            env.layer().fsyncDirectory(dir);
        } catch (IOException e) {
            throw failed("cannot fsync the swap of segment " + old.baseOffset(), e);
        }
        lock.lock();
        try {
            if (segments.get(old.baseOffset()) != old || old == activeSegment()) {
                return false;
            }
            old.changeFileSuffixes("", LogSegment.DELETED_SUFFIX);
            cleaned.changeFileSuffixes(LogSegment.SWAP_SUFFIX, "");
            env.layer().fsyncDirectory(dir);
            segments.put(old.baseOffset(), cleaned);
            long delay = config.fileDeleteDelayMs();
            if (env.scheduler() == null || delay <= 0) {
                deleteSegmentNow(old);
            } else {
                env.scheduler().schedule(() -> deleteSegmentNow(old), delay, TimeUnit.MILLISECONDS);
            }
            return true;
        } catch (IOException e) {
            throw failed("cannot swap in cleaned segment " + old.baseOffset(), e);
        } finally {
            lock.unlock();
        }
    }

    /**
     * What the cleaner must keep of an active producer (Kafka's {@code LastRecord}): the last offset of its last data
     * batch ({@code -1} when it has none, e.g. its last entry is a marker) and its epoch.
     */
    public record ProducerLastRecord(long lastDataOffset, short producerEpoch) {
    }

    /** The active producers and their last records (Kafka's {@code lastRecordsOfActiveProducers}). */
    public Map<Long, ProducerLastRecord> lastRecordsOfActiveProducers() {
        lock.lock();
        try {
            Map<Long, ProducerLastRecord> out = new java.util.HashMap<>();
            for (io.cairn.log.producer.ProducerStateEntry e : producers.activeProducers()) {
                BatchMetadata last = e.lastBatch();
                out.put(e.producerId(), new ProducerLastRecord(last == null ? -1L : last.lastOffset(),
                    e.producerEpoch()));
            }
            return out;
        } finally {
            lock.unlock();
        }
    }

    /**
     * The guard a transactional batch of {@code producerId} at {@code sequence} must present once the coordinator
     * verified it, or {@link VerificationGuard#SENTINEL} when its transaction is already ongoing here (Kafka's
     * {@code UnifiedLog.maybeStartTransactionVerification}).
     */
    public VerificationGuard maybeStartTransactionVerification(long producerId, int sequence, short epoch) {
        return maybeStartTransactionVerification(producerId, sequence, epoch, false);
    }

    /** As above; {@code supportsEpochBump}: the producer speaks transaction.version 2 (Produce v12+). */
    public VerificationGuard maybeStartTransactionVerification(long producerId, int sequence, short epoch,
                                                               boolean supportsEpochBump) {
        lock.lock();
        try {
            return producers.maybeStartVerification(producerId, sequence, epoch, env.time().milliseconds(),
                    supportsEpochBump);
        } finally {
            lock.unlock();
        }
    }

    /** Drops producers idle for longer than {@code producer.id.expiration.ms}, and verifications as old. */
    public void removeExpiredProducers() {
        lock.lock();
        try {
            producers.removeExpiredProducers(env.time().milliseconds() - config.producerIdExpirationMs());
        } finally {
            lock.unlock();
        }
    }

    /** The batch metadata of the duplicate a leader append found, for tests and the broker's logging. */
    static LogAppendInfo duplicateInfo(BatchMetadata dup, long logStartOffset) {
        return new LogAppendInfo(dup.firstOffset(), dup.lastOffset(), dup.timestamp(), dup.lastOffset(), -1L,
            logStartOffset, 0, 0, true, -1);
    }

    /**
     * Closes the log cleanly: a producer snapshot at the log end offset, indexes trimmed, everything fsynced, the
     * recovery point at the log end offset. The log manager then writes the clean-shutdown marker.
     */
    @Override
    public void close() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            activeSegment().log().trim();
            flush(logEndOffset());
            // The last flushes may have left the checkpoint behind the recovery point (maybeCheckpointOffsets).
            checkpointOffsets();
            closed = true;
            ProducerSnapshots.write(env.layer(), dir, logEndOffset(), producers);
            for (LogSegment s : segments.values()) {
                s.close();
            }
        } catch (UncheckedIOException e) {
            throw new KafkaStorageException(logPrefix + "cannot close", e);
        } finally {
            lock.unlock();
        }
    }

    /** Closes handles without flushing: what a crash leaves behind (tests). */
    public void closeWithoutFlush() {
        lock.lock();
        try {
            closed = true;
            for (LogSegment s : segments.values()) {
                s.releaseResources();
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String toString() {
        return "PartitionLog(" + dir.getFileName() + ", logStartOffset=" + logStartOffset + ", logEndOffset="
            + logEndOffset() + ")";
    }
}
