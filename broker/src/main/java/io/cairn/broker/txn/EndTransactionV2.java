package io.cairn.broker.txn;

import io.cairn.broker.txn.TransactionManager.EndResult;
import io.cairn.wire.error.Errors;
import java.util.concurrent.CompletableFuture;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * EndTxn at the client's transaction.version 2 (KIP-890 part 2, Kafka 4.1's {@code TransactionCoordinator
 * .endTransaction}): PrepareCommit/PrepareAbort is written with the epoch bumped by one, so the markers carry an
 * epoch no write of the finished transaction has and every such write is fenced at its partition. The answer names
 * the producer id and epoch of the next transaction; an exhausted epoch (32766 or more) is completed with a new
 * producer id at epoch 0. A retry is the request of the epoch before the bump (or, after a rotation, the old id at the
 * exhausted epoch): it gets NONE once complete, CONCURRENT_TRANSACTIONS while prepared. An abort of a transaction that
 * no partition joined (Empty, or complete with the current epoch) still bumps the epoch, because the client cannot
 * know whether a broker added a partition for it. The coordinator's own aborts (timeout, InitProducerId on an ongoing
 * transaction) come here with the fence's epoch while transaction.version 2 is finalized.
 *
 * <p>Stateless; every method runs on the shard's coordinator thread, as {@link TransactionManager}'s.
 */
final class EndTransactionV2 {

    private static final Logger LOGGER = LogManager.getLogger(EndTransactionV2.class);

    private EndTransactionV2() {
    }

    /**
     * @param nextProducerId the new producer id for an exhausted epoch, once fetched; null before
     */
    static CompletableFuture<EndResult> endTransaction(TransactionManager manager, String transactionalId,
                                                       long producerId, short producerEpoch, boolean commit,
                                                       boolean fromClient, Long nextProducerId) {
        TransactionMetadata metadata = manager.metadata(transactionalId);
        if (metadata == null) {
            return done(EndResult.error(Errors.INVALID_PRODUCER_ID_MAPPING));
        }
        boolean fencing = metadata.pendingState().orElse(null) == TransactionState.PREPARE_EPOCH_FENCE;
        boolean retryOnOverflow = !fencing && metadata.prevProducerId() == producerId
                && producerEpoch == Short.MAX_VALUE - 1 && metadata.producerEpoch() == 0;
        boolean retryOnEpochBump = !fencing && metadata.producerEpoch() == producerEpoch + 1;
        boolean isRetry = retryOnEpochBump || retryOnOverflow;
        if (metadata.pendingTransitionInProgress() && !fencing) {
            return done(EndResult.error(Errors.CONCURRENT_TRANSACTIONS));
        }
        if (metadata.producerId() != producerId && !retryOnOverflow) {
            return done(EndResult.error(Errors.INVALID_PRODUCER_ID_MAPPING));
        }
        if (!validEpoch(metadata, producerEpoch, fencing, fromClient, isRetry, retryOnEpochBump)) {
            return done(EndResult.error(Errors.PRODUCER_FENCED));
        }
        Prepare prepare = new Prepare(manager, metadata, producerId, producerEpoch, commit, fromClient, fencing);
        switch (metadata.state()) {
            case ONGOING:
                return prepare.run(commit ? TransactionState.PREPARE_COMMIT : TransactionState.PREPARE_ABORT, false,
                        nextProducerId);
            case COMPLETE_COMMIT:
                if (commit) {
                    return isRetry ? current(metadata) : invalidState(metadata, commit);
                }
                return isRetry ? invalidState(metadata, commit)
                        : prepare.run(TransactionState.PREPARE_ABORT, true, nextProducerId);
            case COMPLETE_ABORT:
                if (commit) {
                    return invalidState(metadata, commit);
                }
                return isRetry ? current(metadata) : prepare.run(TransactionState.PREPARE_ABORT, true, nextProducerId);
            case PREPARE_COMMIT:
                return commit ? done(EndResult.error(Errors.CONCURRENT_TRANSACTIONS)) : invalidState(metadata, commit);
            case PREPARE_ABORT:
                return !commit ? done(EndResult.error(Errors.CONCURRENT_TRANSACTIONS))
                        : invalidState(metadata, commit);
            case EMPTY:
                return commit ? invalidState(metadata, commit)
                        : prepare.run(TransactionState.PREPARE_ABORT, true, nextProducerId);
            default:
                throw new IllegalStateException("Transactional id " + transactionalId + " is in state "
                        + metadata.state().stateName() + ", which it never stays in");
        }
    }

    /**
     * Kafka's TV2 epoch rule: the current epoch, except that a prepared transaction is only named by its retry and
     * a complete one by its retry or the current epoch; an abort of a fenced transaction keeps the TV1 rule.
     */
    private static boolean validEpoch(TransactionMetadata metadata, short producerEpoch, boolean fencing,
                                      boolean fromClient, boolean isRetry, boolean retryOnEpochBump) {
        short current = metadata.producerEpoch();
        if (fencing) {
            return (!fromClient || producerEpoch == current) && producerEpoch >= current;
        }
        switch (metadata.state()) {
            case PREPARE_COMMIT:
            case PREPARE_ABORT:
                return retryOnEpochBump;
            case COMPLETE_COMMIT:
            case COMPLETE_ABORT:
                return isRetry || producerEpoch == current;
            default:
                return producerEpoch == current;
        }
    }

    /** One PrepareCommit/PrepareAbort to write, with what the request named. */
    private record Prepare(TransactionManager manager, TransactionMetadata metadata, long producerId,
                           short producerEpoch, boolean commit, boolean fromClient, boolean fencing) {

        CompletableFuture<EndResult> run(TransactionState next, boolean noPartitionAdded, Long nextProducerId) {
            if (!fencing && metadata.isProducerEpochExhausted() && nextProducerId == null) {
                // The request is checked again once the id is here: the state may have moved meanwhile.
                return manager.withProducerId(id -> endTransaction(manager, metadata.transactionalId(), producerId,
                        producerEpoch, commit, fromClient, id), EndResult::error);
            }
            if (fencing) {
                metadata.dropPendingFence();
            }
            long rotateTo = !fencing && nextProducerId != null ? nextProducerId : TransactionMetadata.NO_PRODUCER_ID;
            TxnTransitMetadata prepare = metadata.prepareAbortOrCommit(next, TransactionMetadata.TV_2, rotateTo,
                    manager.nowMs(), noPartitionAdded);
            return manager.append(metadata, prepare).thenApply(this::afterPrepare);
        }

        private EndResult afterPrepare(Errors error) {
            if (error != Errors.NONE) {
                if (fencing && !manager.closed()) {
                    metadata.markFailedEpochFence();
                    LOGGER.warn("Could not write the abort of fenced transactional id {}: {}",
                            metadata.transactionalId(), error);
                }
                return EndResult.error(error);
            }
            if (metadata.producerId() != producerId) {
                return EndResult.error(Errors.INVALID_PRODUCER_ID_MAPPING);
            }
            if (metadata.producerEpoch() != producerEpoch && metadata.producerEpoch() != producerEpoch + 1) {
                return EndResult.error(Errors.PRODUCER_FENCED);
            }
            if (metadata.pendingTransitionInProgress()) {
                return EndResult.error(Errors.CONCURRENT_TRANSACTIONS);
            }
            TxnTransitMetadata complete = metadata.prepareComplete(manager.nowMs());
            manager.sendMarkers(metadata, complete);
            return new EndResult(Errors.NONE, complete.producerId(), complete.producerEpoch());
        }
    }

    private static CompletableFuture<EndResult> current(TransactionMetadata metadata) {
        return done(new EndResult(Errors.NONE, metadata.producerId(), metadata.producerEpoch()));
    }

    private static CompletableFuture<EndResult> invalidState(TransactionMetadata metadata, boolean commit) {
        LOGGER.debug("Transactional id {} is in state {}, cannot {}", metadata.transactionalId(),
                metadata.state().stateName(), commit ? "commit" : "abort");
        return done(EndResult.error(Errors.INVALID_TXN_STATE));
    }

    private static <T> CompletableFuture<T> done(T value) {
        return CompletableFuture.completedFuture(value);
    }
}
