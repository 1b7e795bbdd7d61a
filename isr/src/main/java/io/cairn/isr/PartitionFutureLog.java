package io.cairn.isr;

import io.cairn.log.PartitionLog;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.BinaryOperator;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The future replica of one {@link Partition} (AlterReplicaLogDirs, Kafka's future log): the log a move into
 * another log directory is writing, filled from the current log one copy step at a time by the mover thread
 * ({@link #copy}) and swapped in once caught up ({@link #maybeReplaceCurrent}). How a future log follows the current
 * one is {@link FutureLogSync}'s; this class holds the future log and decides when the swap happens.
 *
 * <p>Thread-safety: a package-private collaborator of {@link Partition}, guarded by the partition's state lock
 * ({@code Partition.stateLock}, handed in), which its methods take themselves: {@link #future} is written under the
 * write side ({@link #set}, the swap) and read with or without the lock (volatile); a copy step runs under the read
 * side, the swap under the write side, so no append, read or truncation sees the swap half done; the listener hears
 * of the swap once the lock is released.
 */
final class PartitionFutureLog {

    /** The partition's logger: these are the partition's log lines, under the name Kafka users filter on. */
    private static final Logger LOGGER = LogManager.getLogger(Partition.class);

    private final Partition partition;
    private final ReentrantReadWriteLock stateLock;
    private final PartitionListener listener;
    private final String logPrefix;
    /** The log the move is writing, or null; written under the write side of the partition's state lock. */
    private volatile PartitionLog future;

    PartitionFutureLog(Partition partition, ReentrantReadWriteLock stateLock, PartitionListener listener,
                       String logPrefix) {
        this.partition = partition;
        this.stateLock = stateLock;
        this.listener = listener;
        this.logPrefix = logPrefix;
    }

    /** The future log, or null (any lock, or none). */
    PartitionLog get() {
        return future;
    }

    /**
     * Under the write side: {@code log} (of another log directory) becomes the future log, starting a move, or null
     * ends a move without swapping (cancelled, or the partition leaves); returns the future log it had.
     */
    PartitionLog set(PartitionLog log) {
        stateLock.writeLock().lock();
        try {
            PartitionLog old = future;
            future = log;
            return old;
        } finally {
            stateLock.writeLock().unlock();
        }
    }

    /** How far the future log is behind the current one in offsets, or -1 (any lock, or none). */
    long lag() {
        PartitionLog f = future;
        return f == null ? -1L : partition.log().logEndOffset() - f.logEndOffset();
    }

    /** Roughly how many bytes the future log is behind the current one (their sizes' difference), or -1. */
    long bytesBehind() {
        PartitionLog f = future;
        return f == null ? -1L : partition.log().size() - f.size();
    }

    /**
     * Under the read side: one copy step of the move, the future log gives up what the current log no longer has,
     * then takes the current log's next batches, up to {@code maxBytes}. Returns the bytes copied; -1 when there is
     * no move (any more).
     */
    int copy(int maxBytes) {
        stateLock.readLock().lock();
        try {
            PartitionLog f = future;
            return f == null || partition.isRemoved() ? -1 : FutureLogSync.copyOnce(partition.log(), f, maxBytes);
        } finally {
            stateLock.readLock().unlock();
        }
    }

    /**
     * Under the write side: swaps the future log in when it catches up within {@code maxSteps} copy steps of
     * {@code maxBytes} (Kafka's {@code maybeReplaceCurrentWithFutureReplica}, with the last steps taken here).
     * Appends wait meanwhile (for at most those steps), so the current log cannot grow and each step brings the
     * future closer; the future must then end where the current log ends in the same epoch, takes the current log
     * start offset, is fsynced, and {@code swap} retires the current log and opens the future one in its place (see
     * {@link ReplicaManager}); the high watermark carries over. Returns whether the swap happened; the listener then
     * hears of a log end offset advanced, once the lock is released.
     */
    boolean maybeReplaceCurrent(int maxSteps, int maxBytes, BinaryOperator<PartitionLog> swap) {
        stateLock.writeLock().lock();
        try {
            if (!replaceCurrentLocked(maxSteps, maxBytes, swap)) {
                return false;
            }
        } finally {
            stateLock.writeLock().unlock();
        }
        listener.onLogEndOffsetAdvanced(partition);
        return true;
    }

    /** {@link #maybeReplaceCurrent} with the write side held. */
    private boolean replaceCurrentLocked(int maxSteps, int maxBytes, BinaryOperator<PartitionLog> swap) {
        PartitionLog f = future;
        if (f == null || partition.isRemoved()) {
            return false;
        }
        PartitionLog current = partition.log();
        int steps = 0;
        while (FutureLogSync.copyOnce(current, f, maxBytes) > 0) {
            if (++steps >= maxSteps) {
                return false;
            }
        }
        if (!FutureLogSync.caughtUp(current, f)) {
            return false;
        }
        if (current.logStartOffset() > f.logStartOffset()) {
            f.deleteRecordsBefore(current.logStartOffset());
        }
        f.flush(f.logEndOffset());
        PartitionLog replacement = swap.apply(current, f);
        partition.replaceLog(replacement);
        future = null;
        LOGGER.info("{}Replaced the log in {} with its future log, now in {} (log end offset {})", logPrefix,
            current.dir().getParent(), replacement.dir().getParent(), replacement.logEndOffset());
        return true;
    }
}
