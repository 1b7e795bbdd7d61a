package io.cairn.log.producer;

import io.cairn.wire.error.ErrorCodeException;
import io.cairn.wire.error.Errors;
import io.cairn.wire.error.InvalidProducerEpochException;
import io.cairn.wire.error.InvalidRecordException;
import io.cairn.wire.error.InvalidTxnStateException;
import io.cairn.wire.error.OutOfOrderSequenceException;
import io.cairn.wire.record.ControlRecordType;
import io.cairn.wire.record.EndTransactionMarker;
import io.cairn.wire.record.Record;
import io.cairn.wire.record.RecordBatch;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Producer state of one partition (Kafka's {@code ProducerStateManager}): per producer id the epoch, the last five
 * batches for duplicate detection, and the open transaction; plus the offsets of open transactions, which bound the
 * last stable offset. Rebuilt on load from the latest snapshot ({@link ProducerSnapshots}) and the batches after
 * it.
 *
 * <p>Thread-safety: not thread-safe; guarded by {@code PartitionLog}'s lock.
 */
public final class ProducerStateManager {

    private final Map<Long, ProducerStateEntry> producers = new HashMap<>();
    /** First offset of each open transaction → producer id. */
    private final TreeMap<Long, Long> ongoingTxns = new TreeMap<>();
    /** Producers whose first transactional batch is being verified (KIP-890): producer id → verification. */
    private final Map<Long, Verification> verifications = new HashMap<>();
    private long mapEndOffset;

    /**
     * A verification in progress (Kafka's {@code VerificationStateEntry}): its guard, when it started, and the lowest
     * sequence of the batches waiting for it in the newest epoch (a higher sequence may not overtake it).
     */
    private static final class Verification {
        final VerificationGuard guard = new VerificationGuard();
        final long createdMs;
        /** Started for a transaction.version 2 producer (Produce v12+), whose markers carry its next epoch. */
        final boolean supportsEpochBump;
        int lowestSequence;
        short epoch;

        Verification(long createdMs, int sequence, short epoch, boolean supportsEpochBump) {
            this.createdMs = createdMs;
            this.supportsEpochBump = supportsEpochBump;
            this.lowestSequence = sequence;
            this.epoch = epoch;
        }

        void update(int sequence, short newEpoch) {
            if (newEpoch == epoch && sequence < lowestSequence) {
                lowestSequence = sequence;
            }
            if (newEpoch > epoch) {
                epoch = newEpoch;
                lowestSequence = sequence;
            }
        }
    }

    /** A transaction ended by a marker at {@code lastOffset}. */
    public record CompletedTxn(long producerId, long firstOffset, long lastOffset, boolean aborted) {
    }

    public long mapEndOffset() {
        return mapEndOffset;
    }

    public Collection<ProducerStateEntry> activeProducers() {
        return producers.values();
    }

    /** A copy of every producer's state, in no particular order. */
    public List<ActiveProducer> snapshotActiveProducers() {
        List<ActiveProducer> result = new ArrayList<>(producers.size());
        for (ProducerStateEntry entry : producers.values()) {
            result.add(ActiveProducer.of(entry));
        }
        return result;
    }

    public ProducerStateEntry entry(long producerId) {
        return producers.get(producerId);
    }

    /**
     * Checks a leader append of the idempotent or transactional batch at {@code at}: returns the metadata of the
     * batch it duplicates, or {@code null} when it is new. As Kafka's {@code ProducerAppendInfo}, only a client's
     * batches have their sequence checked (and duplicates found): a coordinator writes its transactional batches
     * (TxnOffsetCommit's offsets) without a sequence, at whatever epoch the producer has now.
     *
     * @param clientAppend whether a client's Produce appends the batch, rather than a coordinator
     *
     * @throws InvalidProducerEpochException when the epoch is older than the producer's
     * @throws OutOfOrderSequenceException   when the sequence does not follow
     * @throws ErrorCodeException            TRANSACTION_COORDINATOR_FENCED for a transaction marker written with an
     *                                       older coordinator epoch than the producer's last marker (Kafka's
     *                                       {@code ProducerAppendInfo.checkCoordinatorEpoch}: a zombie coordinator)
     */
    public BatchMetadata checkLeaderAppend(RecordBatch batch, boolean clientAppend) {
        long pid = batch.producerId();
        if (pid < 0) {
            return null;
        }
        ProducerStateEntry entry = producers.get(pid);
        if (entry == null) {
            return null;
        }
        short epoch = batch.producerEpoch();
        if (epoch < entry.producerEpoch()) {
            throw new InvalidProducerEpochException("epoch " + epoch + " of producer " + pid
                + " is older than the current " + entry.producerEpoch());
        }
        if (batch.isControlBatch()) {
            checkCoordinatorEpoch(batch, entry);
            return null;
        }
        if (!clientAppend) {
            return null;
        }
        int firstSeq = batch.baseSequence();
        int lastSeq = batch.lastSequence();
        if (epoch == entry.producerEpoch()) {
            BatchMetadata duplicate = entry.findDuplicate(firstSeq, lastSeq);
            if (duplicate != null) {
                return duplicate;
            }
            int last = entry.lastSeq();
            if (last >= 0 && firstSeq != nextSequence(last)) {
                throw new OutOfOrderSequenceException("producer " + pid + " epoch " + epoch + ": sequence "
                    + firstSeq + " does not follow " + last);
            }
        } else if (firstSeq != 0) {
            throw new OutOfOrderSequenceException("producer " + pid + " new epoch " + epoch
                + " must start at sequence 0, got " + firstSeq);
        }
        return null;
    }

    private static void checkCoordinatorEpoch(RecordBatch batch, ProducerStateEntry entry) {
        List<Record> records = batch.records();
        if (records.isEmpty()) {
            return;
        }
        EndTransactionMarker marker = EndTransactionMarker.parse(records.get(0));
        if (marker.coordinatorEpoch() < entry.coordinatorEpoch()) {
            throw Errors.TRANSACTION_COORDINATOR_FENCED.exception("Invalid coordinator epoch for producerId "
                + entry.producerId() + ": " + marker.coordinatorEpoch() + " (zombie), " + entry.coordinatorEpoch()
                + " (current)");
        }
    }

    private static int nextSequence(int seq) {
        return seq == Integer.MAX_VALUE ? 0 : seq + 1;
    }

    /**
     * Applies the batch at {@code at} (offsets assigned) to the state. Returns the completed transaction when the
     * batch is a COMMIT or ABORT marker, else {@code null}.
     */
    public CompletedTxn update(RecordBatch batch) {
        long lastOffset = batch.lastOffset();
        mapEndOffset = Math.max(mapEndOffset, lastOffset + 1);
        long pid = batch.producerId();
        if (pid < 0) {
            return null;
        }
        short epoch = batch.producerEpoch();
        long baseOffset = batch.baseOffset();
        long maxTimestamp = batch.maxTimestamp();
        ProducerStateEntry entry = producers.computeIfAbsent(pid,
            id -> new ProducerStateEntry(id, epoch, -1, maxTimestamp, -1L));
        if (batch.isTransactional() && !isMarkerBeforeVerifiedTransaction(batch, verifications.get(pid))) {
            // A marker ends the transaction, a data batch starts it: either way its verification is over.
            verifications.remove(pid);
        }
        if (batch.isControlBatch()) {
            return completeTxn(batch, entry, epoch, lastOffset, maxTimestamp);
        }
        int firstSeq = batch.baseSequence();
        if (firstSeq >= 0) {
            entry.addBatch(epoch, new BatchMetadata(firstSeq, batch.lastSequence(), lastOffset,
                (int) (lastOffset - baseOffset), maxTimestamp));
        } else {
            entry.setEpoch(epoch);
            entry.setLastTimestamp(maxTimestamp);
        }
        if (batch.isTransactional() && entry.currentTxnFirstOffset() < 0) {
            entry.setCurrentTxnFirstOffset(baseOffset);
            ongoingTxns.put(baseOffset, pid);
        }
        return null;
    }

    private CompletedTxn completeTxn(RecordBatch batch, ProducerStateEntry entry, short epoch, long lastOffset,
                                     long timestamp) {
        List<Record> records = batch.records();
        if (records.isEmpty()) {
            return null;
        }
        EndTransactionMarker marker;
        try {
            marker = EndTransactionMarker.parse(records.get(0));
        } catch (InvalidRecordException e) {
            return null;
        }
        entry.setCoordinatorEpoch(marker.coordinatorEpoch());
        entry.setEpoch(epoch);
        entry.setLastTimestamp(timestamp);
        long first = entry.currentTxnFirstOffset();
        entry.setCurrentTxnFirstOffset(-1L);
        if (first < 0) {
            return null;
        }
        ongoingTxns.remove(first);
        return new CompletedTxn(entry.producerId(), first, lastOffset, marker.type() == ControlRecordType.ABORT);
    }

    /**
     * Kafka 4.1's exception: at transaction.version 2 the marker of the previous transaction carries the epoch of the
     * next one, whose first batch may already be verifying (its partition added while the markers were in flight);
     * that marker leaves the verification in place.
     */
    private static boolean isMarkerBeforeVerifiedTransaction(RecordBatch batch, Verification verification) {
        return verification != null && verification.supportsEpochBump && batch.isControlBatch()
            && batch.producerEpoch() == verification.epoch;
    }

    /** True when {@code producerId} has an open transaction here in epoch {@code epoch}. */
    public boolean hasOngoingTransaction(long producerId, short epoch) {
        ProducerStateEntry entry = producers.get(producerId);
        return entry != null && entry.currentTxnFirstOffset() >= 0 && entry.producerEpoch() == epoch;
    }

    /**
     * Starts (or joins) the verification of a transactional batch at {@code sequence}:
     * {@link VerificationGuard#SENTINEL} when the producer's transaction is already ongoing here (Kafka's
     * {@code maybeStartTransactionVerification}), else the guard an append must present.
     */
    public VerificationGuard maybeStartVerification(long producerId, int sequence, short epoch, long nowMs) {
        return maybeStartVerification(producerId, sequence, epoch, nowMs, false);
    }

    /** As above; {@code supportsEpochBump}: the producer speaks transaction.version 2 (Produce v12+). */
    public VerificationGuard maybeStartVerification(long producerId, int sequence, short epoch, long nowMs,
                                                    boolean supportsEpochBump) {
        if (hasOngoingTransaction(producerId, epoch)) {
            return VerificationGuard.SENTINEL;
        }
        Verification verification = verifications.computeIfAbsent(producerId,
            id -> new Verification(nowMs, sequence, epoch, supportsEpochBump));
        verification.update(sequence, epoch);
        return verification.guard;
    }

    /**
     * Kafka's check of a verified leader append ({@code UnifiedLog.analyzeAndValidateProducerState} and
     * {@code ProducerAppendInfo.checkSequence}): a transactional data batch that starts a transaction here must
     * present the producer's current guard (else INVALID_TXN_STATE, "Record was not part of an ongoing
     * transaction"), and may not have a higher sequence than the lowest one waiting for verification.
     */
    public void checkVerified(RecordBatch batch, VerificationGuard requested) {
        if (!batch.isTransactional() || batch.isControlBatch() || batch.producerId() < 0
                || hasOngoingTransaction(batch.producerId(), batch.producerEpoch())) {
            return;
        }
        Verification verification = verifications.get(batch.producerId());
        if (verification == null || !verification.guard.verify(requested)) {
            throw new InvalidTxnStateException("Record was not part of an ongoing transaction");
        }
        if (batch.baseSequence() > verification.lowestSequence) {
            throw new OutOfOrderSequenceException("Out of order sequence number for producer " + batch.producerId()
                + ": " + batch.baseSequence() + " (incoming seq. number), " + verification.lowestSequence
                + " (earliest seen sequence)");
        }
    }

    /** The first offset of the oldest open transaction, or -1 when none is open. */
    public long firstUnstableOffset() {
        return ongoingTxns.isEmpty() ? -1L : ongoingTxns.firstKey();
    }

    /** The last stable offset after a marker at {@code markerOffset} completed a transaction. */
    public long lastStableOffsetAfter(long markerOffset) {
        return ongoingTxns.isEmpty() ? markerOffset + 1 : ongoingTxns.firstKey();
    }

    /**
     * Puts a batch read from the log below the loaded snapshot back into its producer's retained batches (see
     * {@link ProducerStateEntry#restoreEarlier}), so that a retry of it after a restart is found as a duplicate.
     * Does nothing for a producer the snapshot does not know, a control batch or a batch without sequence.
     */
    public void restoreEarlierBatch(RecordBatch batch) {
        ProducerStateEntry entry = producers.get(batch.producerId());
        if (entry == null || batch.isControlBatch() || batch.baseSequence() < 0) {
            return;
        }
        entry.restoreEarlier(batch.producerEpoch(), new BatchMetadata(batch.baseSequence(), batch.lastSequence(),
            batch.lastOffset(), (int) (batch.lastOffset() - batch.baseOffset()), batch.maxTimestamp()));
    }

    /** Whether no producer is known. */
    public boolean isEmpty() {
        return producers.isEmpty();
    }

    /** Forgets everything (before reloading). */
    public void clear() {
        producers.clear();
        verifications.clear();
        ongoingTxns.clear();
        mapEndOffset = 0L;
    }

    /** Replaces the state with a loaded snapshot taken at {@code offset}. */
    public void load(List<ProducerStateEntry> entries, long offset) {
        clear();
        for (ProducerStateEntry e : entries) {
            producers.put(e.producerId(), e);
            if (e.currentTxnFirstOffset() >= 0) {
                ongoingTxns.put(e.currentTxnFirstOffset(), e.producerId());
            }
        }
        mapEndOffset = offset;
    }

    /**
     * Drops producers whose last write is older than {@code minTimestamp} and have no open transaction, and
     * verifications started before it.
     */
    public void removeExpiredProducers(long minTimestamp) {
        producers.values().removeIf(e -> e.currentTxnFirstOffset() < 0 && e.lastTimestamp() < minTimestamp);
        verifications.values().removeIf(v -> v.createdMs < minTimestamp);
    }
}
