package io.cairn.log.cleaner;

import io.cairn.log.index.AbortedTxn;
import io.cairn.log.segment.LogSegment;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.function.Consumer;

/**
 * What the cleaner knows of transactions as it walks a log in offset order (Kafka's
 * {@code CleanedTransactionMetadata}): which data batches belong to aborted transactions (they stay out of the
 * offset map and lose their records), and whether a transaction marker may be removed. An ABORT marker may go once
 * no batch of its transaction is left (the pass saw none); then its {@code .txnindex} entry goes too, else the entry
 * is kept in the cleaned segment. A COMMIT marker may go once the pass saw no batch of its transaction. A marker
 * that may go is still kept until {@code delete.retention.ms} after the clean that first found it removable (the
 * delete horizon, as for tombstones), so a consumer reading within that time still sees it.
 *
 * <p>Not thread-safe: one pass, one thread.
 */
final class CleanedTransactions {

    /** Control record type of a marker whose key says ABORT (Kafka's {@code ControlRecordType}). */
    static final short ABORT = 0;
    static final short COMMIT = 1;

    /** An aborted transaction the walk is inside of, and whether the walk saw one of its batches. */
    private static final class OngoingAbort {
        final AbortedTxn txn;
        boolean sawBatch;

        OngoingAbort(AbortedTxn txn) {
            this.txn = txn;
        }
    }

    private final PriorityQueue<AbortedTxn> upcoming =
        new PriorityQueue<>((a, b) -> Long.compare(a.firstOffset(), b.firstOffset()));
    private final Set<AbortedTxn> known = new HashSet<>();
    private final Map<Long, OngoingAbort> ongoingAborts = new HashMap<>();
    private final Set<Long> ongoingCommits = new HashSet<>();

    /**
     * The aborted transactions of {@code segments} that overlap [from, to). An aborted transaction is indexed in the
     * segment of its ABORT marker, which may lie after {@code to}; the indexes are small, so all are consulted.
     */
    static List<AbortedTxn> abortedBetween(Collection<LogSegment> segments, long from, long to) {
        List<AbortedTxn> out = new ArrayList<>();
        for (LogSegment s : segments) {
            out.addAll(s.txnIndex().collectAbortedTxns(from, to));
        }
        return out;
    }

    /** Adds aborted transactions the walk will meet (duplicates of ones already added are ignored). */
    void addAborted(Collection<AbortedTxn> txns) {
        for (AbortedTxn txn : txns) {
            if (known.add(txn)) {
                upcoming.add(txn);
            }
        }
    }

    private void enterAbortedUpTo(long offset) {
        while (!upcoming.isEmpty() && upcoming.peek().firstOffset() <= offset) {
            AbortedTxn txn = upcoming.poll();
            ongoingAborts.putIfAbsent(txn.producerId(), new OngoingAbort(txn));
        }
    }

    /** A data batch: returns whether it belongs to an aborted transaction (its records may all go). */
    boolean onDataBatch(long producerId, boolean transactional, long lastOffset) {
        enterAbortedUpTo(lastOffset);
        if (!transactional) {
            return false;
        }
        OngoingAbort abort = ongoingAborts.get(producerId);
        if (abort != null) {
            abort.sawBatch = true;
            return true;
        }
        ongoingCommits.add(producerId);
        return false;
    }

    /**
     * A control batch: returns whether it may be removed. {@code type} is its marker's control type, or -1 for a
     * control batch already emptied by an earlier clean. An ABORT marker that stays hands its index entry to
     * {@code keptIndexEntry}.
     */
    boolean onControlBatch(long producerId, long lastOffset, short type, Consumer<AbortedTxn> keptIndexEntry) {
        enterAbortedUpTo(lastOffset);
        if (type < 0) {
            return true;
        }
        if (type == ABORT) {
            OngoingAbort abort = ongoingAborts.remove(producerId);
            if (abort != null && abort.sawBatch) {
                keptIndexEntry.accept(abort.txn);
                return false;
            }
            return true;
        }
        if (type == COMMIT) {
            return !ongoingCommits.remove(producerId);
        }
        return false;
    }

    /**
     * A control batch the pass keeps as it is (beyond the offsets it mapped): the walk goes past it, and an ABORT
     * marker's index entry stays with it, whatever the walk saw of its transaction.
     */
    void onUntouchedControlBatch(long producerId, long lastOffset, short type, Consumer<AbortedTxn> keptIndexEntry) {
        enterAbortedUpTo(lastOffset);
        if (type == ABORT) {
            OngoingAbort abort = ongoingAborts.remove(producerId);
            if (abort != null) {
                keptIndexEntry.accept(abort.txn);
            }
        } else if (type == COMMIT) {
            ongoingCommits.remove(producerId);
        }
    }
}
