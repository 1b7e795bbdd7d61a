package io.cairn.broker.txn;

import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;

/**
 * The states of a transactional id (Kafka's {@code TransactionState}), with the id written in
 * {@code TransactionLogValue.TransactionStatus} and the name DescribeTransactions and ListTransactions report.
 *
 * <pre>
 *   Empty ──AddPartitions──▶ Ongoing ──EndTxn(commit)──▶ PrepareCommit ──markers──▶ CompleteCommit
 *     ▲                        │  └──EndTxn(abort)/timeout──▶ PrepareAbort ──markers──▶ CompleteAbort
 *     └──InitProducerId────────┘       (InitProducerId on Ongoing: PrepareEpochFence, never written, then PrepareAbort)
 *   Empty / CompleteCommit / CompleteAbort ──EndTxn(abort) at transaction.version 2──▶ PrepareAbort
 *   Empty / CompleteCommit / CompleteAbort ──transactional.id.expiration.ms──▶ Dead (a tombstone)
 * </pre>
 *
 * <p>The legal previous states are Kafka 4.1's. Immutable.
 */
public enum TransactionState {
    EMPTY((byte) 0, "Empty"),
    ONGOING((byte) 1, "Ongoing"),
    PREPARE_COMMIT((byte) 2, "PrepareCommit"),
    PREPARE_ABORT((byte) 3, "PrepareAbort"),
    COMPLETE_COMMIT((byte) 4, "CompleteCommit"),
    COMPLETE_ABORT((byte) 5, "CompleteAbort"),
    DEAD((byte) 6, "Dead"),
    PREPARE_EPOCH_FENCE((byte) 7, "PrepareEpochFence");

    private final byte id;
    private final String stateName;

    TransactionState(byte id, String stateName) {
        this.id = id;
        this.stateName = stateName;
    }

    /** The id written in the transaction log. */
    public byte id() {
        return id;
    }

    /** Kafka's name of the state, as DescribeTransactions and ListTransactions report it. */
    public String stateName() {
        return stateName;
    }

    /** The states a transactional id may move to this one from. */
    Set<TransactionState> validPreviousStates() {
        switch (this) {
            case EMPTY:
            case DEAD:
                return EnumSet.of(EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT);
            case ONGOING:
                return EnumSet.of(ONGOING, EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT);
            case PREPARE_COMMIT:
            case PREPARE_EPOCH_FENCE:
                return EnumSet.of(ONGOING);
            case PREPARE_ABORT:
                return EnumSet.of(ONGOING, PREPARE_EPOCH_FENCE, EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT);
            case COMPLETE_COMMIT:
                return EnumSet.of(PREPARE_COMMIT);
            case COMPLETE_ABORT:
                return EnumSet.of(PREPARE_ABORT);
            default:
                throw new IllegalStateException(name());
        }
    }

    /** Empty, CompleteCommit or CompleteAbort: no transaction is open. */
    boolean isComplete() {
        return this == EMPTY || this == COMPLETE_COMMIT || this == COMPLETE_ABORT;
    }

    /** The state with this log id. */
    static Optional<TransactionState> fromId(byte id) {
        for (TransactionState state : values()) {
            if (state.id == id) {
                return Optional.of(state);
            }
        }
        return Optional.empty();
    }

    /** The state with this name (exact case, as Kafka matches ListTransactions' state filters). */
    static Optional<TransactionState> fromName(String name) {
        for (TransactionState state : values()) {
            if (state.stateName.equals(name)) {
                return Optional.of(state);
            }
        }
        return Optional.empty();
    }
}
