package io.cairn.log;

import io.cairn.log.index.TimestampOffset;
import io.cairn.log.segment.FileBatch;
import io.cairn.log.segment.LogSegment;
import io.cairn.wire.error.OffsetOutOfRangeException;
import io.cairn.wire.record.Record;
import io.cairn.wire.record.RecordBatch;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The lock-free read side of {@link PartitionLog}: fetch reads bounded by the log end offset (or a high watermark)
 * and ListOffsets lookups. Works on a snapshot of the published end offset (taken again once when compaction left
 * nothing below it, see {@link #read(PartitionLog, LogOffsetMetadata, long, int, long, boolean)}), so bytes not yet
 * published are never returned. Stateless and thread-safe.
 */
final class LogReads {

    private LogReads() {
    }

    static FetchDataInfo read(PartitionLog log, long fetchOffset, int maxBytes, long maxOffset, boolean minOne) {
        try {
            return read(log, log.logEndOffsetMetadata(), fetchOffset, maxBytes, maxOffset, minOne);
        } catch (UncheckedIOException e) {
            // A segment deleted or swapped (retention, compaction) after this read looked it up: look again once.
            return read(log, log.logEndOffsetMetadata(), fetchOffset, maxBytes, maxOffset, minOne);
        }
    }

    /**
     * Reads with {@code end}, the log end offset published when the read began, as its bound. The cleaner may remove
     * every record between the fetch offset and that bound meanwhile (a record goes when a later one with its key
     * exists below the cleaner's end, which can be past a snapshot taken before the last roll): the walk then finds
     * its first batch at or after the bound. When it was the snapshot, not {@code maxOffset}, that cut such a read
     * to nothing, the segment is read once more with the end published now, so the read is never empty while data
     * at or after the fetch offset is below the log end.
     */
    static FetchDataInfo read(PartitionLog log, LogOffsetMetadata end, long fetchOffset, int maxBytes,
                              long maxOffset, boolean minOne) {
        long start = log.logStartOffset();
        if (fetchOffset > end.messageOffset() || fetchOffset < start) {
            throw new OffsetOutOfRangeException("offset " + fetchOffset + " is out of range [" + start + ", "
                + end.messageOffset() + "] of " + log.dir().getFileName());
        }
        if (fetchOffset >= Math.min(maxOffset, end.messageOffset())) {
            return emptyAt(fetchOffset);
        }
        LogOffsetMetadata bound = end;
        Map.Entry<Long, LogSegment> entry = log.segmentMap().floorEntry(fetchOffset);
        while (entry != null) {
            FetchDataInfo info = readSegment(log, entry, bound, fetchOffset, maxBytes, maxOffset, minOne);
            if (info == null) {
                entry = log.segmentMap().higherEntry(entry.getKey());
                continue;
            }
            if (info.records().length() > 0 || bound != end || maxOffset <= end.messageOffset()) {
                return info;
            }
            LogOffsetMetadata now = log.logEndOffsetMetadata();
            if (now.messageOffset() <= end.messageOffset()) {
                return info;
            }
            bound = now;
            entry = log.segmentMap().ceilingEntry(entry.getKey());
        }
        return emptyAt(fetchOffset);
    }

    private static FetchDataInfo readSegment(PartitionLog log, Map.Entry<Long, LogSegment> entry,
                                             LogOffsetMetadata end, long fetchOffset, int maxBytes, long maxOffset,
                                             boolean minOne) {
        LogSegment segment = entry.getValue();
        Map.Entry<Long, LogSegment> next = log.segmentMap().higherEntry(entry.getKey());
        long bound = Math.min(maxOffset, end.messageOffset());
        int maxPosition = maxPosition(segment, next == null ? null : next.getKey(), bound, end);
        return segment.read(fetchOffset, maxBytes, maxPosition, minOne);
    }

    private static int maxPosition(LogSegment segment, Long nextBase, long bound, LogOffsetMetadata end) {
        if (segment.baseOffset() == end.segmentBaseOffset() && bound == end.messageOffset()) {
            // the segment may have been cleaned since the end was published: its file can be shorter now
            return Math.min(end.relativePositionInSegment(), segment.size());
        }
        if (nextBase == null || bound < nextBase) {
            FileBatch holding = segment.translateOffset(bound);
            return holding == null ? segment.size() : holding.position();
        }
        return segment.size();
    }

    private static FetchDataInfo emptyAt(long offset) {
        return new FetchDataInfo(LogOffsetMetadata.offsetOnly(offset), FileSlice.empty(), false, List.of());
    }

    static Optional<TimestampAndOffset> offsetByTimestamp(PartitionLog log, long timestamp) {
        long start = log.logStartOffset();
        if (timestamp == TimestampAndOffset.EARLIEST_TIMESTAMP
            || timestamp == TimestampAndOffset.EARLIEST_LOCAL_TIMESTAMP) {
            return Optional.of(new TimestampAndOffset(-1L, start, log.epochs().epochForOffset(start)));
        }
        if (timestamp == TimestampAndOffset.LATEST_TIMESTAMP) {
            long leo = log.logEndOffset();
            return Optional.of(new TimestampAndOffset(-1L, leo, log.epochs().latestEpoch()));
        }
        if (timestamp == TimestampAndOffset.MAX_TIMESTAMP) {
            return maxTimestamp(log);
        }
        if (timestamp < 0) {
            return Optional.empty();
        }
        for (LogSegment segment : log.segments()) {
            if (segment.maxTimestampSoFar().timestamp() < timestamp) {
                continue;
            }
            TimestampOffset hint = segment.timeIndex().lookup(timestamp);
            int position = segment.offsetIndex().lookup(hint.offset()).position();
            int end = segment.size();
            while (true) {
                FileBatch batch = segment.log().batchAt(position, end);
                if (batch == null) {
                    break;
                }
                if (batch.maxTimestamp() >= timestamp && batch.lastOffset() >= start) {
                    ByteBuffer whole = segment.log().readBatch(batch);
                    for (Record r : RecordBatch.of(whole, 0).records()) {
                        if (r.timestamp() >= timestamp && r.offset() >= start) {
                            return Optional.of(new TimestampAndOffset(r.timestamp(), r.offset(),
                                batch.partitionLeaderEpoch()));
                        }
                    }
                }
                position = batch.endPosition();
            }
        }
        return Optional.empty();
    }

    private static Optional<TimestampAndOffset> maxTimestamp(PartitionLog log) {
        LogSegment best = null;
        long bestTs = -1L;
        for (LogSegment segment : log.segments()) {
            long ts = segment.maxTimestampSoFar().timestamp();
            if (ts > bestTs) {
                bestTs = ts;
                best = segment;
            }
        }
        if (best == null) {
            return Optional.empty();
        }
        FileBatch batch = best.translateOffset(best.maxTimestampSoFar().offset());
        if (batch == null) {
            return Optional.empty();
        }
        ByteBuffer whole = best.log().readBatch(batch);
        for (Record r : RecordBatch.of(whole, 0).records()) {
            if (r.timestamp() == batch.maxTimestamp()) {
                return Optional.of(new TimestampAndOffset(r.timestamp(), r.offset(), batch.partitionLeaderEpoch()));
            }
        }
        return Optional.of(new TimestampAndOffset(batch.maxTimestamp(), batch.lastOffset(),
            batch.partitionLeaderEpoch()));
    }
}
