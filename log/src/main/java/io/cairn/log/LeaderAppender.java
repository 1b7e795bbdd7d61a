package io.cairn.log;

import io.cairn.log.producer.BatchMetadata;
import io.cairn.log.producer.VerificationGuard;
import io.cairn.wire.error.CorruptRecordException;
import io.cairn.wire.error.InvalidRecordException;
import io.cairn.wire.error.RecordBatchTooLargeException;
import io.cairn.wire.error.RecordTooLargeException;
import io.cairn.wire.record.RecordBatch;
import io.cairn.wire.record.RecordBatches;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Validation and offset assignment of {@link PartitionLog} appends ({@code UnifiedLog.analyzeAndValidateRecords}
 * and, per batch, {@link LogValidator}). Frames, sizes, magic and CRC32C are checked from the headers and the
 * record rules by {@link LogValidator}, outside the lock; producer-state checks and offset assignment run under the
 * partition lock, where the only writes are the base offset and partition leader epoch (outside the CRC).
 *
 * <p>Thread-safety: stateless apart from its log; methods are called by any appending thread.
 */
final class LeaderAppender {

    private final PartitionLog log;

    LeaderAppender(PartitionLog log) {
        this.log = log;
    }

    /**
     * What the one walk over an append's batches ({@link #analyze}) found: the counts, the header facts a
     * follower's append needs and a view of each batch, so that nothing walks the batches again before the write
     * and no later step makes views of its own.
     *
     * @param views         one view per complete batch, in order
     * @param records       records in them
     * @param bytes         their bytes
     * @param firstOffset   base offset of the first batch
     * @param lastOffset    last offset of the last batch
     * @param maxTimestamp  largest batch max timestamp, -1 when none
     * @param offsetOfMax   last offset of the batch carrying it
     * @param lastEpoch     partition leader epoch of the last batch
     * @param misplaced     whether a batch after the first does not follow its predecessor as a follower's log
     *                      requires (an overlap, or a gap unless the topic is compacted)
     * @param misplacedAt   base offset of the first such batch
     * @param misplacedExpected the offset that batch should have started at
     */
    private record Analysis(List<RecordBatch> views, int records, int bytes, long firstOffset, long lastOffset,
                            long maxTimestamp, long offsetOfMax, int lastEpoch, boolean misplaced, long misplacedAt,
                            long misplacedExpected) {

        int batches() {
            return views.size();
        }
    }

    /** {@code verification} is null when the append needs none (verification disabled, coordinator writes). */
    LogAppendInfo appendAsLeader(ByteBuffer records, int leaderEpoch, AppendOrigin origin,
                                 VerificationGuard verification) {
        LogConfig config = log.config();
        Analysis analysis = analyze(records, config, origin);
        if (analysis.batches() == 0) {
            return emptyAppend();
        }
        long now = log.env().time().milliseconds();
        String partition = log.topicPartitionName();
        List<RecordBatch> views = analysis.views();
        int batches = views.size();
        LogValidator.Validated single = null;
        List<LogValidator.Validated> validated = batches == 1 ? null : new ArrayList<>(batches);
        int totalBytes = 0;
        int totalRecords = 0;
        int at = records.position();
        for (int i = 0; i < batches; i++) {
            RecordBatch view = views.get(i);
            LogValidator.Validated v = LogValidator.validate(view, records, at, config, now, origin, partition);
            if (validated == null) {
                single = v;
            } else {
                validated.add(v);
            }
            totalBytes += v.batch().remaining();
            totalRecords += v.recordCount();
            at += view.sizeInBytes();
        }
        if (totalBytes > config.segmentBytes()) {
            throw new RecordBatchTooLargeException("Message batch size is " + totalBytes + " bytes in append to "
                + "partition " + partition + ", which exceeds the maximum configured segment size of "
                + config.segmentBytes() + ".");
        }
        ByteBuffer toAppend;
        List<RecordBatch> toWrite;
        if (validated == null) {
            // The common case, one producer batch: the view the analysis made is over the bytes written.
            toAppend = single.batch();
            toWrite = List.of(single.view());
        } else {
            toAppend = join(validated, totalBytes);
            toWrite = viewsOf(toAppend, batches);
        }
        log.lock().lock();
        try {
            for (int i = 0; i < batches; i++) {
                RecordBatch batch = toWrite.get(i);
                BatchMetadata duplicate = log.producers().checkLeaderAppend(batch,
                    origin == AppendOrigin.CLIENT);
                if (duplicate != null) {
                    return PartitionLog.duplicateInfo(duplicate, log.logStartOffset());
                }
                if (verification != null) {
                    log.producers().checkVerified(batch, verification);
                }
            }
            long first = log.logEndOffset();
            long next = first;
            long maxTimestamp = -1L;
            long offsetOfMax = -1L;
            for (int i = 0; i < batches; i++) {
                RecordBatch batch = toWrite.get(i);
                batch.setBaseOffset(next);
                batch.setPartitionLeaderEpoch(leaderEpoch);
                next += batch.lastOffsetDelta() + 1L;
                long batchMax = validated == null ? single.maxTimestamp() : validated.get(i).maxTimestamp();
                if (batchMax > maxTimestamp) {
                    maxTimestamp = batchMax;
                    offsetOfMax = next - 1;
                }
            }
            log.appendValidated(toAppend, toWrite, first, next - 1, totalRecords, maxTimestamp);
            return new LogAppendInfo(first, next - 1, maxTimestamp, offsetOfMax,
                config.logAppendTime() ? now : -1L, log.logStartOffset(), totalRecords, totalBytes, false,
                leaderEpoch);
        } finally {
            log.lock().unlock();
        }
    }

    /** The batches of several validated ones in one buffer (only coordinators append more than one batch). */
    private static ByteBuffer join(List<LogValidator.Validated> validated, int totalBytes) {
        ByteBuffer joined = ByteBuffer.allocate(totalBytes);
        for (LogValidator.Validated v : validated) {
            joined.put(v.batch().duplicate());
        }
        return joined.flip();
    }

    /** A view of each of the {@code batches} batches of {@code joined}. */
    private static List<RecordBatch> viewsOf(ByteBuffer joined, int batches) {
        List<RecordBatch> views = new ArrayList<>(batches);
        for (int at = joined.position(); at < joined.limit(); ) {
            RecordBatch batch = RecordBatch.of(joined, at);
            views.add(batch);
            at += batch.sizeInBytes();
        }
        return views;
    }

    LogAppendInfo appendAsFollower(ByteBuffer records) {
        LogConfig config = log.config();
        Analysis analysis = analyze(records, config, null);
        if (analysis.batches() == 0) {
            return emptyAppend();
        }
        long first = analysis.firstOffset();
        long last = analysis.lastOffset();
        log.lock().lock();
        try {
            long expected = log.logEndOffset();
            if (first < expected || (first > expected && !config.compact())) {
                throw new UnexpectedAppendOffsetException("follower append at offset " + first + " but the log "
                    + "end offset is " + expected, first, last);
            }
            if (analysis.misplaced()) {
                throw new UnexpectedAppendOffsetException("follower append at offset " + analysis.misplacedAt()
                    + " but the log expects is " + analysis.misplacedExpected(), first, last);
            }
            log.appendValidated(records, analysis.views(), first, last, analysis.records(),
                analysis.maxTimestamp());
            return new LogAppendInfo(first, last, analysis.maxTimestamp(), analysis.offsetOfMax(), -1L,
                log.logStartOffset(), analysis.records(), analysis.bytes(), false, analysis.lastEpoch());
        } finally {
            log.lock().unlock();
        }
    }

    private LogAppendInfo emptyAppend() {
        return new LogAppendInfo(-1L, -1L, -1L, -1L, -1L, log.logStartOffset(), 0, 0, false, -1);
    }

    /**
     * Checks every batch's frame, magic, CRC and size limit ({@code analyzeAndValidateRecords}) and gathers the
     * header facts of {@link Analysis}, in one walk over the batches; {@code origin} is null for a follower.
     */
    private static Analysis analyze(ByteBuffer records, LogConfig config, AppendOrigin origin) {
        int at = records.position();
        int end = records.limit();
        List<RecordBatch> views = null;
        RecordBatch only = null;
        int batches = 0;
        int count = 0;
        long firstOffset = -1L;
        long lastOffset = -1L;
        long maxTimestamp = -1L;
        long offsetOfMax = -1L;
        int lastEpoch = -1;
        boolean misplaced = false;
        long misplacedAt = -1L;
        long misplacedExpected = -1L;
        boolean compact = config.compact();
        while (at < end) {
            RecordBatches.Frame frame = RecordBatches.frameAt(records, at, end);
            int size = frame.sizeInBytes();
            if (frame.kind() == RecordBatches.FrameKind.CORRUPT) {
                throw frame.corruption();
            }
            // Unlike a fetch, an append has no partial trailing batch: one is a batch larger than what was sent.
            if (frame.kind() == RecordBatches.FrameKind.PARTIAL) {
                if (size > config.maxMessageBytes()) {
                    throw new RecordTooLargeException("batch of " + size + " bytes exceeds max.message.bytes "
                        + config.maxMessageBytes());
                }
                throw new CorruptRecordException(size < 0
                    ? "partial batch header of " + (end - at) + " bytes at the end"
                    : "batch size " + size + " invalid with " + (end - at) + " bytes left");
            }
            if (frame.magic() != RecordBatch.MAGIC) {
                throw new InvalidRecordException("unsupported batch magic " + frame.magic());
            }
            if (size < RecordBatch.RECORD_BATCH_OVERHEAD) {
                throw new CorruptRecordException("batch size " + size + " is below the batch header's "
                    + RecordBatch.RECORD_BATCH_OVERHEAD + " bytes");
            }
            RecordBatch batch = RecordBatch.of(records, at);
            if (origin == AppendOrigin.CLIENT && batch.baseOffset() != 0) {
                throw new InvalidRecordException("The baseOffset of the record batch in the append should be 0, "
                    + "but it is " + batch.baseOffset());
            }
            // A follower takes what its leader accepted (Kafka's appendAsFollower ignores the record size).
            if (origin != null && size > config.maxMessageBytes()) {
                throw new RecordTooLargeException("The record batch size in the append is " + size
                    + " bytes which exceeds the maximum configured value of " + config.maxMessageBytes() + ".");
            }
            if (!batch.isValid()) {
                throw new CorruptRecordException("Record is corrupt (stored crc = " + batch.checksum() + ")");
            }
            if (batch.lastOffsetDelta() < 0) {
                throw new InvalidRecordException("negative last offset delta " + batch.lastOffsetDelta());
            }
            long base = batch.baseOffset();
            if (batches == 0) {
                firstOffset = base;
            } else if (!misplaced && (base <= lastOffset || base > lastOffset + 1 && !compact)) {
                misplaced = true;
                misplacedAt = base;
                misplacedExpected = lastOffset + 1;
            }
            lastOffset = batch.lastOffset();
            long batchMax = batch.maxTimestamp();
            if (batchMax > maxTimestamp) {
                maxTimestamp = batchMax;
                offsetOfMax = lastOffset;
            }
            lastEpoch = batch.partitionLeaderEpoch();
            count += Math.max(batch.recordCount(), 0);
            if (batches == 0) {
                only = batch;
            } else {
                if (views == null) {
                    views = new ArrayList<>();
                    views.add(only);
                }
                views.add(batch);
            }
            batches++;
            at += size;
        }
        List<RecordBatch> all = views != null ? views : only != null ? List.of(only) : List.of();
        return new Analysis(all, count, end - records.position(), firstOffset, lastOffset, maxTimestamp,
            offsetOfMax, lastEpoch, misplaced, misplacedAt, misplacedExpected);
    }
}
