package io.cairn.log.retention;

import io.cairn.log.LogConfig;
import io.cairn.log.PartitionLog;
import io.cairn.log.segment.LogSegment;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * One retention pass over a partition (Kafka's {@code UnifiedLog.deleteOldSegments}): segments wholly below the
 * log start offset always go; with {@code cleanup.policy} containing {@code delete}, the oldest segments beyond
 * {@code retention.bytes} and then the oldest whose newest timestamp is older than {@code retention.ms} go too.
 *
 * <p>Each rule walks the segments from the oldest, the active one included, and stops at the first it keeps
 * (Kafka's {@code deletableSegments}); an empty active segment is never chosen, nor a segment that holds offsets at
 * or above the high watermark ({@link PartitionLog#highWatermark()}). When every segment is chosen the
 * active one is rolled first, so the log keeps one (empty) segment at its end offset. For {@code retention.bytes}
 * the size counted is the whole log's, the active segment's bytes included, and a segment goes while the log
 * stays at or above the limit without it ({@code deleteRetentionSizeBreachedSegments}).
 *
 * <p>The whole pass, the choice of segments as well as the unlink, runs under the log's lock
 * ({@link PartitionLog#deleteOldSegments} takes it): a scan outside it could judge the active segment expired, then
 * roll and delete it after a fresh batch landed in it. Stateless.
 */
public final class RetentionPolicy {

    /** Whether a segment may go, given the next newer one ({@code null} for the active segment). */
    private interface Rule {
        boolean deletable(LogSegment segment, LogSegment next);
    }

    private RetentionPolicy() {
    }

    /** Runs one pass under the log's lock; returns the number of segments deleted. */
    public static int apply(PartitionLog log) {
        if (!log.isLockedByCurrentThread()) {
            throw new IllegalStateException("retention runs under the lock of " + log);
        }
        LogConfig config = log.config();
        int deleted = deleteOld(log, (segment, next) -> next != null && next.baseOffset() <= log.logStartOffset(),
            "log start offset breach");
        if (!config.delete()) {
            return deleted;
        }
        deleted += bySize(log, config);
        deleted += byTime(log, config);
        return deleted;
    }

    private static int bySize(PartitionLog log, LogConfig config) {
        long limit = config.retentionBytes();
        long size = log.size();
        if (limit < 0 || size < limit) {
            return 0;
        }
        long[] excess = {size - limit};
        return deleteOld(log, (segment, next) -> {
            long segmentSize = segment.size();
            if (excess[0] - segmentSize < 0) {
                return false;
            }
            excess[0] -= segmentSize;
            return true;
        }, "retention.bytes " + limit + " breached");
    }

    private static int byTime(PartitionLog log, LogConfig config) {
        long limit = config.retentionMs();
        if (limit < 0) {
            return 0;
        }
        long now = log.time().milliseconds();
        return deleteOld(log, (segment, next) -> now - segment.largestTimestamp() > limit,
            "retention.ms " + limit + " breached");
    }

    private static int deleteOld(PartitionLog log, Rule rule, String reason) {
        List<LogSegment> victims = new ArrayList<>();
        Iterator<LogSegment> it = log.segments().iterator();
        LogSegment segment = it.hasNext() ? it.next() : null;
        while (segment != null) {
            LogSegment next = it.hasNext() ? it.next() : null;
            boolean lastAndEmpty = next == null && segment.size() == 0;
            // Kafka's deletableSegments: only a segment wholly below the high watermark may go, so a leader never
            // deletes what its in-sync followers have not yet copied
            long upperBound = next != null ? next.baseOffset() : log.logEndOffset();
            if (lastAndEmpty || log.highWatermark() < upperBound || !rule.deletable(segment, next)) {
                break;
            }
            victims.add(segment);
            segment = next;
        }
        if (victims.isEmpty()) {
            return 0;
        }
        if (victims.size() == log.numberOfSegments()) {
            // the log always keeps a segment: start the new one at the log end offset before the old ones go
            log.roll();
        }
        log.unlinkSegments(victims, reason);
        return victims.size();
    }
}
