package io.cairn.broker.txn;

import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;

/**
 * The state of one transactional id in its coordinator (Kafka's {@code TransactionMetadata}): its producer id and
 * epoch, timeout, {@link TransactionState} and partitions, and the transition in flight. Every change is two steps: a
 * {@code prepare*} method checks that the transition is legal, marks it pending and returns the {@link
 * TxnTransitMetadata} to write; once the write is committed {@link #completeTransitionTo} applies it (or {@link
 * #abortPendingTransition} drops it when the write failed). While a transition is pending no other may start, which is
 * why requests then get CONCURRENT_TRANSACTIONS. At transaction.version 2 (the client's, recorded with each transition)
 * every commit and abort bumps the epoch, and an exhausted epoch moves to a new producer id when the transaction
 * completes.
 *
 * <p>Thread-safety: not thread-safe; confined to the coordinator thread of its shard.
 */
public final class TransactionMetadata {

    /** Kafka's {@code RecordBatch.NO_PRODUCER_ID}. */
    public static final long NO_PRODUCER_ID = -1L;
    /** Kafka's {@code RecordBatch.NO_PRODUCER_EPOCH}. */
    public static final short NO_PRODUCER_EPOCH = -1;
    /** Kafka's {@code TransactionVersion.TV_2}: an epoch bump per transaction, partitions added by the brokers. */
    public static final short TV_2 = 2;

    private final String transactionalId;
    private long producerId;
    private long prevProducerId;
    private long nextProducerId = NO_PRODUCER_ID;
    private short producerEpoch;
    private short lastProducerEpoch;
    private int txnTimeoutMs;
    private TransactionState state;
    private final Set<TopicPartition> topicPartitions;
    private long txnStartTimestamp;
    private long txnLastUpdateTimestamp;
    private TransactionState pendingState;
    private boolean hasFailedEpochFence;
    private short clientTransactionVersion;

    TransactionMetadata(String transactionalId, long producerId, long prevProducerId, short producerEpoch,
                        short lastProducerEpoch, int txnTimeoutMs, TransactionState state,
                        Set<TopicPartition> topicPartitions, long txnStartTimestamp, long txnLastUpdateTimestamp) {
        this.transactionalId = transactionalId;
        this.producerId = producerId;
        this.prevProducerId = prevProducerId;
        this.producerEpoch = producerEpoch;
        this.lastProducerEpoch = lastProducerEpoch;
        this.txnTimeoutMs = txnTimeoutMs;
        this.state = state;
        this.topicPartitions = new HashSet<>(topicPartitions);
        this.txnStartTimestamp = txnStartTimestamp;
        this.txnLastUpdateTimestamp = txnLastUpdateTimestamp;
    }

    /** A transactional id seen for the first time: Empty, with {@code producerId} and no epoch yet. */
    static TransactionMetadata created(String transactionalId, long producerId, int txnTimeoutMs, long nowMs) {
        return new TransactionMetadata(transactionalId, producerId, NO_PRODUCER_ID, NO_PRODUCER_EPOCH,
                NO_PRODUCER_EPOCH, txnTimeoutMs, TransactionState.EMPTY, Set.of(), -1L, nowMs);
    }

    /** Kafka's {@code TransactionVersion.supportsEpochBump}: transaction.version 2 or later. */
    static boolean supportsEpochBump(short transactionVersion) {
        return transactionVersion >= TV_2;
    }

    /**
     * Kafka's {@code isEpochExhausted}: an epoch of {@code Short.MAX_VALUE - 1} or more leaves no room for the bump
     * that fences a producer, so the next InitProducerId rotates to a new producer id (KIP-360).
     */
    static boolean isEpochExhausted(short epoch) {
        return epoch >= Short.MAX_VALUE - 1;
    }

    // ---- reads

    public String transactionalId() {
        return transactionalId;
    }

    public long producerId() {
        return producerId;
    }

    long prevProducerId() {
        return prevProducerId;
    }

    public short producerEpoch() {
        return producerEpoch;
    }

    short lastProducerEpoch() {
        return lastProducerEpoch;
    }

    long nextProducerId() {
        return nextProducerId;
    }

    /** The transaction.version of the producer's last transition. */
    short clientTransactionVersion() {
        return clientTransactionVersion;
    }

    public int txnTimeoutMs() {
        return txnTimeoutMs;
    }

    public TransactionState state() {
        return state;
    }

    /** The partitions of the open transaction (a copy). */
    public Set<TopicPartition> topicPartitions() {
        return Set.copyOf(topicPartitions);
    }

    boolean containsAll(Set<TopicPartition> partitions) {
        return topicPartitions.containsAll(partitions);
    }

    boolean contains(TopicPartition partition) {
        return topicPartitions.contains(partition);
    }

    public long txnStartTimestamp() {
        return txnStartTimestamp;
    }

    public long txnLastUpdateTimestamp() {
        return txnLastUpdateTimestamp;
    }

    Optional<TransactionState> pendingState() {
        return Optional.ofNullable(pendingState);
    }

    boolean pendingTransitionInProgress() {
        return pendingState != null;
    }

    boolean isProducerEpochExhausted() {
        return isEpochExhausted(producerEpoch);
    }

    boolean hasFailedEpochFence() {
        return hasFailedEpochFence;
    }

    // ---- transitions

    /**
     * InitProducerId on a complete transaction: the epoch goes up by one. {@code expectedEpoch} is the epoch the
     * producer named (KIP-360), empty when it named none. A retry of a bump whose answer was lost (the producer
     * names the epoch before it) gets the current epoch again; any other epoch is PRODUCER_FENCED.
     *
     * @return the transition, or the error
     */
    Result prepareIncrementProducerEpoch(int newTxnTimeoutMs, Optional<Short> expectedEpoch, long nowMs) {
        if (isProducerEpochExhausted()) {
            throw new IllegalStateException("Cannot bump the exhausted epoch " + producerEpoch + " of "
                    + transactionalId);
        }
        short bumped = (short) (producerEpoch + 1);
        short newEpoch;
        short newLastEpoch;
        if (expectedEpoch.isEmpty()) {
            newEpoch = bumped;
            newLastEpoch = NO_PRODUCER_EPOCH;
        } else if (producerEpoch == NO_PRODUCER_EPOCH || expectedEpoch.get() == producerEpoch) {
            newEpoch = bumped;
            newLastEpoch = producerEpoch;
        } else if (expectedEpoch.get() == lastProducerEpoch) {
            newEpoch = producerEpoch;
            newLastEpoch = lastProducerEpoch;
        } else {
            return Result.error(Errors.PRODUCER_FENCED);
        }
        return Result.of(prepareTransitionTo(TransactionState.EMPTY, producerId, newEpoch, newLastEpoch,
                newTxnTimeoutMs, Set.of(), -1L, nowMs));
    }

    /**
     * InitProducerId when the epoch is exhausted: a new producer id with epoch 0. The old epoch is remembered when
     * the producer named it ({@code recordLastEpoch}), so that a retry is recognised.
     */
    TxnTransitMetadata prepareProducerIdRotation(long newProducerId, int newTxnTimeoutMs, long nowMs,
                                                 boolean recordLastEpoch) {
        return prepareTransitionTo(TransactionState.EMPTY, newProducerId, (short) 0,
                recordLastEpoch ? producerEpoch : NO_PRODUCER_EPOCH, newTxnTimeoutMs, Set.of(), -1L, nowMs);
    }

    /**
     * Fences the producer of the ongoing transaction before it is aborted (InitProducerId on Ongoing, or the
     * transaction timed out): the epoch goes up by one, unless a fence already failed to be written, in which case
     * the epoch was bumped in memory and never handed out. The transition is never written: {@code PrepareAbort}
     * with the bumped epoch follows it.
     */
    TxnTransitMetadata prepareFenceProducerEpoch() {
        if (producerEpoch == Short.MAX_VALUE) {
            throw new IllegalStateException("Cannot fence producer " + producerId + " of " + transactionalId
                    + ": its epoch is exhausted");
        }
        short bumped = hasFailedEpochFence ? producerEpoch : (short) (producerEpoch + 1);
        return prepareTransitionTo(TransactionState.PREPARE_EPOCH_FENCE, producerId, bumped, lastProducerEpoch,
                txnTimeoutMs, topicPartitions, txnStartTimestamp, txnLastUpdateTimestamp);
    }

    /**
     * AddPartitionsToTxn / AddOffsetsToTxn (or a broker adding a partition for the producer at transaction.version
     * 2): Ongoing with the partitions added; a new transaction starts now.
     */
    TxnTransitMetadata prepareAddPartitions(Set<TopicPartition> added, long nowMs, short clientVersion) {
        long start = state.isComplete() ? nowMs : txnStartTimestamp;
        Set<TopicPartition> partitions = new HashSet<>(topicPartitions);
        partitions.addAll(added);
        return prepareTransitionTo(TransactionState.ONGOING, producerId, nextProducerId, producerEpoch,
                lastProducerEpoch, txnTimeoutMs, partitions, start, nowMs, clientVersion);
    }

    /**
     * EndTxn (or an abort by the coordinator): PrepareCommit or PrepareAbort. At transaction.version 2 the epoch goes
     * up by one (the markers carry it, which fences every write of the finished transaction) and
     * {@code newNextProducerId} is the id to rotate to when that exhausts it; {@code noPartitionAdded}: an abort of a
     * transaction no partition joined, which starts now.
     */
    TxnTransitMetadata prepareAbortOrCommit(TransactionState newState, short clientVersion, long newNextProducerId,
                                            long nowMs, boolean noPartitionAdded) {
        boolean bump = supportsEpochBump(clientVersion);
        short newEpoch = bump ? (short) (producerEpoch + 1) : producerEpoch;
        short newLastEpoch = bump ? producerEpoch : lastProducerEpoch;
        long start = noPartitionAdded ? nowMs : txnStartTimestamp;
        return prepareTransitionTo(newState, producerId, newNextProducerId, newEpoch, newLastEpoch, txnTimeoutMs,
                topicPartitions, start, nowMs, clientVersion);
    }

    /**
     * The markers are written: CompleteCommit or CompleteAbort, without partitions; at transaction.version 2 with a
     * next producer id, the id rotates to it at epoch 0.
     */
    TxnTransitMetadata prepareComplete(long nowMs) {
        TransactionState target = state == TransactionState.PREPARE_COMMIT ? TransactionState.COMPLETE_COMMIT
                : TransactionState.COMPLETE_ABORT;
        boolean rotate = supportsEpochBump(clientTransactionVersion) && nextProducerId != NO_PRODUCER_ID;
        return prepareTransitionTo(target, rotate ? nextProducerId : producerId, NO_PRODUCER_ID,
                rotate ? (short) 0 : producerEpoch, lastProducerEpoch, txnTimeoutMs, Set.of(), txnStartTimestamp, nowMs,
                clientTransactionVersion);
    }

    /** The id expired: Dead, written as a tombstone. */
    TxnTransitMetadata prepareDead() {
        return prepareTransitionTo(TransactionState.DEAD, producerId, producerEpoch, lastProducerEpoch,
                txnTimeoutMs, Set.of(), txnStartTimestamp, txnLastUpdateTimestamp);
    }

    /**
     * The epoch fence is taken over by the abort that follows it (Kafka's TV1 {@code endTransaction}): the pending
     * fence is dropped and its bumped epoch becomes the current one, so that PrepareAbort is written with it.
     */
    void adoptFencedEpoch(short fencedEpoch) {
        pendingState = null;
        producerEpoch = fencedEpoch;
        lastProducerEpoch = NO_PRODUCER_EPOCH;
    }

    /**
     * The epoch fence is taken over by the abort that follows it at transaction.version 2: the pending fence is
     * dropped and the abort bumps the epoch itself.
     */
    void dropPendingFence() {
        pendingState = null;
    }

    /** The write of an epoch fence failed: the next fence reuses the epoch instead of bumping it again. */
    void markFailedEpochFence() {
        hasFailedEpochFence = true;
    }

    /**
     * Marks {@code newState} pending and returns the transition to it. As in Kafka, the transition's previous producer
     * id is the current one: after a rotation it names the old id until the next transition, which is the window in
     * which a producer retrying the rotation is recognised.
     */
    private TxnTransitMetadata prepareTransitionTo(TransactionState newState, long newProducerId, short newEpoch,
                                                   short newLastEpoch, int newTimeoutMs,
                                                   Set<TopicPartition> partitions, long newStartTimestamp,
                                                   long updateTimestamp) {
        return prepareTransitionTo(newState, newProducerId, NO_PRODUCER_ID, newEpoch, newLastEpoch, newTimeoutMs,
                partitions, newStartTimestamp, updateTimestamp, clientTransactionVersion);
    }

    private TxnTransitMetadata prepareTransitionTo(TransactionState newState, long newProducerId,
                                                   long newNextProducerId, short newEpoch, short newLastEpoch,
                                                   int newTimeoutMs, Set<TopicPartition> partitions,
                                                   long newStartTimestamp, long updateTimestamp,
                                                   short clientVersion) {
        if (pendingState != null) {
            throw new IllegalStateException("Transactional id " + transactionalId + " already moves to "
                    + pendingState.stateName() + ", cannot move to " + newState.stateName());
        }
        if (newProducerId < 0 || (newState != TransactionState.DEAD && newEpoch < 0)) {
            throw new IllegalArgumentException("Illegal producer id " + newProducerId + " or epoch " + newEpoch
                    + " for " + transactionalId);
        }
        if (!newState.validPreviousStates().contains(state)) {
            throw new IllegalStateException("Transactional id " + transactionalId + " cannot move from "
                    + state.stateName() + " to " + newState.stateName());
        }
        pendingState = newState;
        return new TxnTransitMetadata(newProducerId, producerId, newNextProducerId, newEpoch, newLastEpoch,
                newTimeoutMs, newState, partitions, newStartTimestamp, updateTimestamp, clientVersion);
    }

    /** Applies a transition whose record is committed. */
    void completeTransitionTo(TxnTransitMetadata transit) {
        if (pendingState == null || pendingState != transit.state()) {
            throw new IllegalStateException("Transactional id " + transactionalId + " completes a move to "
                    + transit.state().stateName() + " but " + (pendingState == null ? "none"
                    : pendingState.stateName()) + " is pending");
        }
        if (transit.state() == TransactionState.PREPARE_EPOCH_FENCE) {
            throw new IllegalStateException("An epoch fence of " + transactionalId + " is never written");
        }
        producerId = transit.producerId();
        prevProducerId = transit.prevProducerId();
        nextProducerId = transit.nextProducerId();
        clientTransactionVersion = transit.clientTransactionVersion();
        producerEpoch = transit.producerEpoch();
        lastProducerEpoch = transit.lastProducerEpoch();
        txnTimeoutMs = transit.txnTimeoutMs();
        topicPartitions.clear();
        topicPartitions.addAll(transit.topicPartitions());
        txnStartTimestamp = transit.txnStartTimestamp();
        txnLastUpdateTimestamp = transit.txnLastUpdateTimestamp();
        state = transit.state();
        pendingState = null;
        hasFailedEpochFence = false;
    }

    /** The write of the pending transition failed: it is dropped and the state stays. */
    void abortPendingTransition() {
        pendingState = null;
    }

    /** The state a record of the log describes, for loading. */
    static TransactionMetadata fromTransit(String transactionalId, TxnTransitMetadata transit) {
        TransactionMetadata metadata = new TransactionMetadata(transactionalId, transit.producerId(),
                transit.prevProducerId(), transit.producerEpoch(), transit.lastProducerEpoch(), transit.txnTimeoutMs(),
                transit.state(), transit.topicPartitions(), transit.txnStartTimestamp(),
                transit.txnLastUpdateTimestamp());
        metadata.nextProducerId = transit.nextProducerId();
        metadata.clientTransactionVersion = transit.clientTransactionVersion();
        return metadata;
    }

    @Override
    public String toString() {
        return "TransactionMetadata(transactionalId=" + transactionalId + ", producerId=" + producerId
                + ", producerEpoch=" + producerEpoch + ", state=" + state.stateName() + ", pendingState="
                + (pendingState == null ? "none" : pendingState.stateName()) + ", partitions=" + topicPartitions
                + ", timeoutMs=" + txnTimeoutMs + ", startMs=" + txnStartTimestamp + ")";
    }

    /** A transition, or the error that forbids it. Immutable. */
    record Result(TxnTransitMetadata transit, Errors error) {

        static Result of(TxnTransitMetadata transit) {
            return new Result(transit, Errors.NONE);
        }

        static Result error(Errors error) {
            return new Result(null, error);
        }
    }
}
