package io.cairn.log;

import io.cairn.log.producer.BatchMetadata;
import io.cairn.log.record.BatchHeader;
import io.cairn.log.record.BatchRecords;
import io.cairn.log.record.InvalidBatchException;
import io.cairn.log.record.LogRecord;
import io.cairn.wire.error.CorruptRecordException;
import io.cairn.wire.error.InvalidRecordException;
import io.cairn.wire.error.InvalidTimestampException;
import io.cairn.wire.error.RecordTooLargeException;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * Validation and offset assignment of {@link PartitionLog} appends (Kafka's {@code LogValidator} and
 * {@code UnifiedLog.analyzeAndValidateRecords} for magic 2). Checks sizes, magic, CRC32C, record counts and
 * timestamps from the batch headers alone, outside the lock; producer-state checks and offset assignment run under
 * the partition lock. Batches are never decompressed here; LogAppendTime rewrites the header and its CRC only.
 *
 * <p>Thread-safety: stateless apart from its log; methods are called by any appending thread.
 */
final class LeaderAppender {

    private final PartitionLog log;

    LeaderAppender(PartitionLog log) {
        this.log = log;
    }

    /** Header facts of a validated request. */
    private record Analysis(int batches, int records, int bytes) {
    }

    LogAppendInfo appendAsLeader(ByteBuffer records, int leaderEpoch, AppendOrigin origin) {
        LogConfig config = log.config();
        Analysis analysis = analyze(records, config, true, origin);
        if (analysis.batches() == 0) {
            return emptyAppend();
        }
        long now = log.env().time().milliseconds();
        if (!config.logAppendTime()) {
            checkTimestamps(records, config, now);
        }
        if (config.compact()) {
            requireKeys(records);
        }
        log.lock().lock();
        try {
            for (int at = records.position(); at < records.limit(); at += BatchHeader.sizeInBytes(records, at)) {
                BatchMetadata duplicate = log.producers().checkLeaderAppend(records, at);
                if (duplicate != null) {
                    return PartitionLog.duplicateInfo(duplicate, log.logStartOffset());
                }
            }
            long first = log.logEndOffset();
            long next = first;
            long maxTimestamp = -1L;
            long offsetOfMax = -1L;
            for (int at = records.position(); at < records.limit(); at += BatchHeader.sizeInBytes(records, at)) {
                BatchHeader.setBaseOffsetAndEpoch(records, at, next, leaderEpoch);
                if (config.logAppendTime()) {
                    BatchHeader.setLogAppendTime(records, at, now);
                }
                next += BatchHeader.lastOffsetDelta(records, at) + 1L;
                long batchMax = BatchHeader.maxTimestamp(records, at);
                if (batchMax > maxTimestamp) {
                    maxTimestamp = batchMax;
                    offsetOfMax = next - 1;
                }
            }
            log.appendValidated(records, first, next - 1, analysis.records(), maxTimestamp);
            return new LogAppendInfo(first, next - 1, maxTimestamp, offsetOfMax,
                config.logAppendTime() ? now : -1L, log.logStartOffset(), analysis.records(), analysis.bytes(),
                false);
        } finally {
            log.lock().unlock();
        }
    }

    LogAppendInfo appendAsFollower(ByteBuffer records) {
        LogConfig config = log.config();
        Analysis analysis = analyze(records, config, false, AppendOrigin.COORDINATOR);
        if (analysis.batches() == 0) {
            return emptyAppend();
        }
        log.lock().lock();
        try {
            long expected = log.logEndOffset();
            long first = BatchHeader.baseOffset(records, records.position());
            long maxTimestamp = -1L;
            long offsetOfMax = -1L;
            long last = -1L;
            for (int at = records.position(); at < records.limit(); at += BatchHeader.sizeInBytes(records, at)) {
                long base = BatchHeader.baseOffset(records, at);
                if (base < expected || (base > expected && !config.compact())) {
                    throw new UnexpectedAppendOffsetException("follower append at offset " + base + " but the log "
                        + (at == records.position() ? "end offset" : "expects") + " is " + expected);
                }
                last = BatchHeader.lastOffset(records, at);
                expected = last + 1;
                long batchMax = BatchHeader.maxTimestamp(records, at);
                if (batchMax > maxTimestamp) {
                    maxTimestamp = batchMax;
                    offsetOfMax = last;
                }
            }
            log.appendValidated(records, first, last, analysis.records(), maxTimestamp);
            return new LogAppendInfo(first, last, maxTimestamp, offsetOfMax, -1L, log.logStartOffset(),
                analysis.records(), analysis.bytes(), false);
        } finally {
            log.lock().unlock();
        }
    }

    private LogAppendInfo emptyAppend() {
        return new LogAppendInfo(-1L, -1L, -1L, -1L, -1L, log.logStartOffset(), 0, 0, false);
    }

    /** Checks every batch's frame, magic, CRC, size limit and (from clients) record count. */
    private static Analysis analyze(ByteBuffer records, LogConfig config, boolean leader, AppendOrigin origin) {
        int at = records.position();
        int end = records.limit();
        int batches = 0;
        int count = 0;
        while (at < end) {
            if (end - at < BatchHeader.LOG_OVERHEAD) {
                throw new CorruptRecordException("partial batch header of " + (end - at) + " bytes at the end");
            }
            int size = BatchHeader.sizeInBytes(records, at);
            if (size > config.maxMessageBytes()) {
                throw new RecordTooLargeException("batch of " + size + " bytes exceeds max.message.bytes "
                    + config.maxMessageBytes());
            }
            if (size < BatchHeader.SIZE || size > end - at) {
                throw new CorruptRecordException("batch size " + size + " invalid with " + (end - at)
                    + " bytes left");
            }
            if (BatchHeader.magic(records, at) != BatchHeader.MAGIC_V2) {
                throw new InvalidRecordException("unsupported batch magic " + BatchHeader.magic(records, at));
            }
            if (BatchHeader.crc(records, at) != BatchHeader.computeCrc(records, at, size)) {
                throw new CorruptRecordException("batch CRC32C mismatch at byte " + (at - records.position()));
            }
            int delta = BatchHeader.lastOffsetDelta(records, at);
            int recordsCount = BatchHeader.recordsCount(records, at);
            if (delta < 0) {
                throw new InvalidRecordException("negative last offset delta " + delta);
            }
            if (leader && origin == AppendOrigin.CLIENT) {
                if (recordsCount <= 0 || recordsCount != delta + 1) {
                    throw new InvalidRecordException("record count " + recordsCount
                        + " does not match the offset range of " + (delta + 1));
                }
                if (BatchHeader.isControl(records, at)) {
                    throw new InvalidRecordException("clients may not write control batches");
                }
                try {
                    BatchRecords.checkOffsetDeltas(records, at);
                } catch (InvalidBatchException e) {
                    throw new InvalidRecordException(e.getMessage(), e);
                }
            }
            count += Math.max(recordsCount, 0);
            batches++;
            at += size;
        }
        return new Analysis(batches, count, end - records.position());
    }

    /** Compacted topics need a key on every record: the one rule that makes the leader decode records. */
    private static void requireKeys(ByteBuffer records) {
        for (int at = records.position(); at < records.limit(); at += BatchHeader.sizeInBytes(records, at)) {
            if (BatchHeader.isControl(records, at)) {
                continue;
            }
            List<LogRecord> decoded;
            try {
                decoded = BatchRecords.decode(records, at);
            } catch (InvalidBatchException e) {
                throw new CorruptRecordException(e.getMessage(), e);
            }
            for (LogRecord r : decoded) {
                if (r.key() == null) {
                    throw new InvalidRecordException("Compacted topic cannot accept message without key");
                }
            }
        }
    }

    private static void checkTimestamps(ByteBuffer records, LogConfig config, long now) {
        for (int at = records.position(); at < records.limit(); at += BatchHeader.sizeInBytes(records, at)) {
            long ts = BatchHeader.maxTimestamp(records, at);
            if (ts < 0) {
                continue;
            }
            if (ts - now > config.timestampAfterMaxMs() || now - ts > config.timestampBeforeMaxMs()) {
                throw new InvalidTimestampException("batch max timestamp " + ts + " is out of range of broker time "
                    + now);
            }
        }
    }
}
