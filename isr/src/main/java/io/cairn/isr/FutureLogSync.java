package io.cairn.isr;

import io.cairn.isr.fetcher.TruncationPoint;
import io.cairn.log.FetchDataInfo;
import io.cairn.log.PartitionLog;
import io.cairn.log.UnexpectedAppendOffsetException;
import io.cairn.log.epoch.EpochEntry;
import io.cairn.log.epoch.LeaderEpochCache;
import io.cairn.wire.record.RecordBatches;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * How a future log follows the partition's current log (Kafka's {@code ReplicaAlterLogDirsThread}, whose leader is
 * the current log of the same broker): the future first gives up what the current no longer has, by the same
 * leader-epoch rule a follower uses against its leader ({@link #reconcile}), then appends the current log's next
 * batches with their offsets and epochs as a follower does ({@link #copyOnce}), which also rebuilds its
 * leader-epoch cache, producer state and transaction index. Within one leader epoch a log only grows, so once both
 * logs end at the same offset in the same latest epoch they hold the same batches.
 *
 * <p>Stateless. The caller serialises the calls for one future log (the partition's mover thread, or the swap under
 * the partition's write lock); the current log may change concurrently, which the next call reconciles.
 */
final class FutureLogSync {

    private FutureLogSync() {
    }

    /**
     * Truncates {@code future} to where it agrees with {@code current}: never beyond the current log end, and by
     * the current log's end offset of the future's latest epoch (an epoch the current log no longer has ends where
     * the current log's history ends); restarts it empty at the current log start offset when it ends below it.
     * Returns whether anything was removed.
     */
    static boolean reconcile(PartitionLog current, PartitionLog future) {
        long futureEnd = future.logEndOffset();
        long currentEnd = current.logEndOffset();
        long target = Math.min(futureEnd, currentEnd);
        int futureEpoch = future.latestEpoch();
        List<EpochEntry> currentHistory = current.epochEntries();
        if (futureEpoch >= 0 && !currentHistory.isEmpty()) {
            EpochEntry answer = endOffsetForEpoch(currentHistory, futureEpoch, currentEnd);
            target = Math.min(target, TruncationPoint.offset(futureEnd, futureEnd,
                future.epochEntries(), answer.epoch(), answer.startOffset()));
        }
        boolean truncated = false;
        if (target < futureEnd) {
            future.truncateTo(target);
            truncated = true;
        }
        long currentStart = current.logStartOffset();
        if (currentStart > future.logEndOffset()) {
            future.truncateFullyAndStartAt(currentStart);
            truncated = true;
        }
        return truncated;
    }

    /** The current log's end of {@code epoch} (its latest epoch and log end when it has none newer). */
    private static EpochEntry endOffsetForEpoch(List<EpochEntry> history, int epoch, long logEndOffset) {
        EpochEntry answer = LeaderEpochCache.endOffsetFor(history, epoch, logEndOffset);
        return !answer.equals(LeaderEpochCache.UNDEFINED) ? answer
            : new EpochEntry(history.get(history.size() - 1).epoch(), logEndOffset);
    }

    /**
     * Reconciles, then copies the current log's batches from the future's log end, up to {@code maxBytes} (at least
     * one whole batch). Returns the bytes appended (0 when the future has caught up).
     */
    static int copyOnce(PartitionLog current, PartitionLog future, int maxBytes) {
        reconcile(current, future);
        long fetchOffset = future.logEndOffset();
        if (fetchOffset >= current.logEndOffset()) {
            return 0;
        }
        ByteBuffer records;
        try (FetchDataInfo info = current.read(fetchOffset, maxBytes, Long.MAX_VALUE, true)) {
            records = info.records().readBytes();
        }
        // A read cut by maxBytes ends in a partial batch, which the next step reads whole.
        ByteBuf view = Unpooled.wrappedBuffer(records.duplicate());
        try {
            records.limit(RecordBatches.of(view).sizeOfCompleteBatches());
        } finally {
            view.release();
        }
        if (!records.hasRemaining()) {
            return 0;
        }
        try {
            future.appendAsFollower(records.duplicate());
        } catch (UnexpectedAppendOffsetException e) {
            // The current log start moved into a batch: an empty future restarts at that batch, as a follower does.
            if (future.logEndOffset() != future.logStartOffset() || e.firstOffset() >= fetchOffset) {
                throw e;
            }
            future.truncateFullyAndStartAt(e.firstOffset());
            future.appendAsFollower(records.duplicate());
        }
        return records.remaining();
    }

    /** Whether {@code future} ends where {@code current} does, in the same latest epoch. */
    static boolean caughtUp(PartitionLog current, PartitionLog future) {
        return future.logEndOffset() == current.logEndOffset() && future.latestEpoch() == current.latestEpoch();
    }
}
