package io.cairn.log;

import io.cairn.wire.error.KafkaStorageException;
import java.util.function.LongSupplier;

/**
 * Group commit for durable mode: appenders that need their offset on disk wait here; the first one becomes the
 * flusher and fsyncs everything written so far, the others wait for its result, so concurrent writers share
 * one fsync (and the next flusher picks up everything that arrived during the previous fsync).
 *
 * <p>It fsyncs log data only and never moves the recovery point; Kafka's flush ({@code flush.messages},
 * {@code flush.ms}, {@link PartitionLog#flush}) fsyncs indexes too, moves the recovery point and advances this
 * object, so neither fsyncs again what the other covered (see the module README, "Flush and durability").
 *
 * <p>Thread-safety: thread-safe, guarded by this object's monitor; the fsync itself runs outside it.
 */
final class GroupCommit {

    private long flushedOffset;
    private boolean flushing;

    GroupCommit(long flushedOffset) {
        this.flushedOffset = flushedOffset;
    }

    synchronized long flushedOffset() {
        return flushedOffset;
    }

    /** Returns once every offset below {@code target} is fsynced; {@code flusher} fsyncs and returns its reach. */
    void awaitFlushed(long target, LongSupplier flusher) {
        while (true) {
            synchronized (this) {
                while (flushedOffset < target && flushing) {
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new KafkaStorageException("interrupted while waiting for fsync", e);
                    }
                }
                if (flushedOffset >= target) {
                    return;
                }
                flushing = true;
            }
            long covered = -1L;
            try {
                covered = flusher.getAsLong();
            } finally {
                synchronized (this) {
                    flushing = false;
                    flushedOffset = Math.max(flushedOffset, covered);
                    notifyAll();
                }
            }
        }
    }

    /** A full flush moved the recovery point. */
    synchronized void advance(long offset) {
        if (offset > flushedOffset) {
            flushedOffset = offset;
            notifyAll();
        }
    }

    /** Truncation moved the end of the log back. */
    synchronized void reset(long offset) {
        flushedOffset = offset;
    }
}
