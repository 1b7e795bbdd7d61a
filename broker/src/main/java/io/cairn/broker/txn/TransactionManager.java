package io.cairn.broker.txn;

import io.cairn.broker.coordinator.ShardContext;
import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.coordinator.CoordinatorWriteErrors;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.DescribeTransactionsResponseData;
import io.cairn.wire.message.ListTransactionsResponseData;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The transactional ids of one {@code __transaction_state} partition and the rules of Kafka's {@code
 * TransactionCoordinator} for them: InitProducerId (epoch bump, fencing of an ongoing transaction, KIP-360 recovery
 * with the producer's id and epoch, a new producer id when the epoch is exhausted), AddPartitionsToTxn and its KIP-890
 * verification, EndTxn (PrepareCommit/PrepareAbort written, markers sent through the {@link TransactionMarkerSender},
 * then CompleteCommit/CompleteAbort written; at the client's transaction.version 2, KIP-890 part 2, every commit and
 * abort bumps the epoch and an exhausted one rotates to a new producer id), the abort of timed-out transactions, the
 * expiry of idle ids, DescribeTransactions and ListTransactions. Records are written at the value version of the
 * finalized transaction.version, which also decides how the coordinator aborts. The shard's plumbing (the partition's
 * writes, timers, the thread) is behind {@link ShardContext}.
 *
 * <p>Thread-safety: not thread-safe; every method runs on the shard's coordinator thread, and so do the completions
 * it chains ({@link ShardContext#write} completes there; producer ids and markers complete elsewhere and are moved
 * back through {@code coordinatorThread}).
 */
public final class TransactionManager {

    private static final Logger LOGGER = LogManager.getLogger(TransactionManager.class);
    /** How long the write of CompleteCommit/CompleteAbort waits before a retry after COORDINATOR_NOT_AVAILABLE. */
    static final long COMPLETE_RETRY_BACKOFF_MS = 100L;
    /** The bytes of tombstones written in one batch when ids expire (well under the topic's max.message.bytes). */
    static final int MAX_TOMBSTONE_BATCH_BYTES = 256 * 1024;

    private final ShardContext<CoordinatorRecord> ctx;
    private final int coordinatorEpoch;
    private final TransactionConfig config;
    private final TransactionMarkerSender markers;
    private final Supplier<CompletableFuture<Long>> producerIds;
    private final Executor coordinatorThread;
    private final Supplier<Short> transactionVersion;
    private final Map<String, TransactionMetadata> transactions = new HashMap<>();
    private boolean closed;

    /**
     * @param ctx               the shard's writes and timers
     * @param coordinatorEpoch  the leader epoch of the partition, which fences markers of an older coordinator
     * @param producerIds       new producer ids (the broker's {@code ProducerIdManager})
     * @param coordinatorThread runs a task on the shard's coordinator thread
     */
    public TransactionManager(ShardContext<CoordinatorRecord> ctx, int coordinatorEpoch, TransactionConfig config,
                              TransactionMarkerSender markers, Supplier<CompletableFuture<Long>> producerIds,
                              Executor coordinatorThread) {
        this(ctx, coordinatorEpoch, config, markers, producerIds, coordinatorThread, () -> (short) 0);
    }

    /**
     * @param transactionVersion the finalized transaction.version (read at each write and coordinator abort)
     */
    public TransactionManager(ShardContext<CoordinatorRecord> ctx, int coordinatorEpoch, TransactionConfig config,
                              TransactionMarkerSender markers, Supplier<CompletableFuture<Long>> producerIds,
                              Executor coordinatorThread, Supplier<Short> transactionVersion) {
        this.ctx = ctx;
        this.transactionVersion = transactionVersion;
        this.coordinatorEpoch = coordinatorEpoch;
        this.config = config;
        this.markers = markers;
        this.producerIds = producerIds;
        this.coordinatorThread = coordinatorThread;
    }

    /** The result of InitProducerId. Immutable. */
    public record InitResult(long producerId, short producerEpoch, Errors error) {

        static InitResult error(Errors error) {
            return new InitResult(TransactionMetadata.NO_PRODUCER_ID, TransactionMetadata.NO_PRODUCER_EPOCH, error);
        }
    }

    /** The result of EndTxn: the error, and the producer id and epoch to use next (EndTxn v5). Immutable. */
    public record EndResult(Errors error, long producerId, short producerEpoch) {

        static EndResult error(Errors error) {
            return new EndResult(error, TransactionMetadata.NO_PRODUCER_ID, TransactionMetadata.NO_PRODUCER_EPOCH);
        }
    }

    /** A producer id and epoch a producer names (KIP-360). Immutable. */
    public record ProducerIdAndEpoch(long producerId, short epoch) {
    }

    /** The state of one id, if any (tests and describe). */
    public Optional<TransactionMetadata> transaction(String transactionalId) {
        return Optional.ofNullable(transactions.get(transactionalId));
    }

    // ---- loading

    /** Loading: applies one record of the partition; the last one of an id wins, a tombstone removes it. */
    public void replay(TransactionLog.Entry entry) {
        if (entry.state() == null) {
            transactions.remove(entry.transactionalId());
        } else {
            transactions.put(entry.transactionalId(),
                    TransactionMetadata.fromTransit(entry.transactionalId(), entry.state()));
        }
    }

    /**
     * The load is complete: transactions found in PrepareCommit/PrepareAbort resume sending their markers, and the
     * timers of timed-out transactions and expired ids start.
     */
    public void onLoaded() {
        for (TransactionMetadata metadata : List.copyOf(transactions.values())) {
            TransactionState state = metadata.state();
            if (state == TransactionState.PREPARE_COMMIT || state == TransactionState.PREPARE_ABORT) {
                LOGGER.info("Resuming the {} of transactional id {} (producer {} epoch {}) after loading "
                        + "__transaction_state-{}", state.stateName(), metadata.transactionalId(),
                        metadata.producerId(), metadata.producerEpoch(), ctx.partitionIndex());
                sendMarkers(metadata, metadata.prepareComplete(ctx.nowMs()));
            }
        }
        scheduleAbortTimedOut();
        scheduleExpiry();
    }

    /** The shard is gone: nothing it started may change state any more. */
    public void unload() {
        closed = true;
    }

    // ---- InitProducerId

    /**
     * InitProducerId for a transactional id (Kafka's {@code handleInitProducerId}); the timeout is already checked.
     *
     * @param expected the producer id and epoch the producer named (v3+), empty when it named none
     */
    public CompletableFuture<InitResult> initProducerId(String transactionalId, int timeoutMs,
                                                        Optional<ProducerIdAndEpoch> expected) {
        return initProducerId(transactionalId, timeoutMs, expected, null);
    }

    private CompletableFuture<InitResult> initProducerId(String transactionalId, int timeoutMs,
                                                         Optional<ProducerIdAndEpoch> expected, Long newProducerId) {
        TransactionMetadata metadata = transactions.get(transactionalId);
        if (newProducerId == null && (metadata == null || needsRotation(metadata, expected))) {
            return withNewProducerId(id -> initProducerId(transactionalId, timeoutMs, expected, id));
        }
        if (metadata == null) {
            metadata = TransactionMetadata.created(transactionalId, newProducerId, timeoutMs, ctx.nowMs());
            transactions.put(transactionalId, metadata);
        }
        if (metadata.pendingTransitionInProgress()) {
            return done(InitResult.error(Errors.CONCURRENT_TRANSACTIONS));
        }
        if (expected.isPresent() && !isValidProducerId(metadata, expected.get())) {
            return done(InitResult.error(Errors.PRODUCER_FENCED));
        }
        switch (metadata.state()) {
            case PREPARE_COMMIT:
            case PREPARE_ABORT:
                return done(InitResult.error(Errors.CONCURRENT_TRANSACTIONS));
            case EMPTY:
            case COMPLETE_COMMIT:
            case COMPLETE_ABORT:
                return bumpOrRotate(metadata, timeoutMs, expected, newProducerId);
            case ONGOING:
                // The ongoing transaction is aborted with a bumped epoch, which is never handed out: the producer
                // retries on CONCURRENT_TRANSACTIONS and gets the next bump (or a new id if that one exhausts it).
                TxnTransitMetadata fence = metadata.prepareFenceProducerEpoch();
                return abortAsCoordinator(transactionalId, fence).thenApply(error -> InitResult.error(
                        error == Errors.NONE ? Errors.CONCURRENT_TRANSACTIONS : error));
            default:
                throw new IllegalStateException("Transactional id " + transactionalId + " is in state "
                        + metadata.state().stateName() + ", which it never stays in");
        }
    }

    private CompletableFuture<InitResult> bumpOrRotate(TransactionMetadata metadata, int timeoutMs,
                                                       Optional<ProducerIdAndEpoch> expected, Long newProducerId) {
        TxnTransitMetadata transit;
        if (exhaustedAndExpected(metadata, expected)) {
            if (newProducerId == null) {
                return withNewProducerId(id -> initProducerId(metadata.transactionalId(), timeoutMs, expected, id));
            }
            transit = metadata.prepareProducerIdRotation(newProducerId, timeoutMs, ctx.nowMs(),
                    expected.isPresent());
        } else {
            TransactionMetadata.Result result = metadata.prepareIncrementProducerEpoch(timeoutMs,
                    expected.map(ProducerIdAndEpoch::epoch), ctx.nowMs());
            if (result.error() != Errors.NONE) {
                return done(InitResult.error(result.error()));
            }
            transit = result.transit();
        }
        return append(metadata, transit).thenApply(error -> {
            if (error != Errors.NONE) {
                LOGGER.info("Returning {} to InitProducerId of transactional id {}", error, metadata.transactionalId());
                return InitResult.error(error);
            }
            LOGGER.info("Initialized transactional id {} with producer id {} and epoch {} on __transaction_state-{}",
                    metadata.transactionalId(), transit.producerId(), transit.producerEpoch(), ctx.partitionIndex());
            return new InitResult(transit.producerId(), transit.producerEpoch(), Errors.NONE);
        });
    }

    private static boolean needsRotation(TransactionMetadata metadata, Optional<ProducerIdAndEpoch> expected) {
        return !metadata.pendingTransitionInProgress() && metadata.state().isComplete()
                && exhaustedAndExpected(metadata, expected);
    }

    private static boolean exhaustedAndExpected(TransactionMetadata metadata, Optional<ProducerIdAndEpoch> expected) {
        return metadata.isProducerEpochExhausted()
                && expected.map(e -> e.epoch() == metadata.producerEpoch()).orElse(true);
    }

    /**
     * Kafka's check of the producer id named by a KIP-360 InitProducerId: the id was just created, or it is the
     * current one (the epoch is checked by the bump), or it is the previous one with an exhausted epoch (a retry of
     * the rotation whose answer was lost).
     */
    private static boolean isValidProducerId(TransactionMetadata metadata, ProducerIdAndEpoch expected) {
        return metadata.producerEpoch() == TransactionMetadata.NO_PRODUCER_EPOCH
                || expected.producerId() == metadata.producerId()
                || (expected.producerId() == metadata.prevProducerId()
                        && TransactionMetadata.isEpochExhausted(expected.epoch()));
    }

    private CompletableFuture<InitResult> withNewProducerId(
            Function<Long, CompletableFuture<InitResult>> then) {
        return withProducerId(then, InitResult::error);
    }

    // ---- AddPartitionsToTxn, AddOffsetsToTxn

    /** Adds {@code partitions} to the transaction of a transaction.version 0 client (AddPartitionsToTxn v0-3). */
    public CompletableFuture<Errors> addPartitions(String transactionalId, long producerId, short producerEpoch,
                                                   Set<TopicPartition> partitions) {
        return addPartitions(transactionalId, producerId, producerEpoch, partitions, (short) 0);
    }

    /**
     * Adds {@code partitions} to the transaction (Kafka 4.1's {@code handleAddPartitionsToTransaction});
     * {@code clientVersion} is 2 when a broker adds them for the producer (AddPartitionsToTxn v4+).
     */
    public CompletableFuture<Errors> addPartitions(String transactionalId, long producerId, short producerEpoch,
                                                   Set<TopicPartition> partitions, short clientVersion) {
        TransactionMetadata metadata = transactions.get(transactionalId);
        if (metadata == null) {
            return done(Errors.INVALID_PRODUCER_ID_MAPPING);
        }
        if (metadata.pendingTransitionInProgress()) {
            return done(Errors.CONCURRENT_TRANSACTIONS);
        }
        if (metadata.producerId() != producerId) {
            return done(Errors.INVALID_PRODUCER_ID_MAPPING);
        }
        if (metadata.producerEpoch() != producerEpoch) {
            return done(Errors.PRODUCER_FENCED);
        }
        if (isPrepare(metadata.state())) {
            return done(Errors.CONCURRENT_TRANSACTIONS);
        }
        if (metadata.state() == TransactionState.ONGOING && metadata.containsAll(partitions)) {
            return done(Errors.NONE);
        }
        return append(metadata, metadata.prepareAddPartitions(partitions, ctx.nowMs(), clientVersion));
    }

    /**
     * Whether {@code partitions} are in the ongoing transaction (KIP-890 part 1, AddPartitionsToTxn v4+
     * {@code verify_only}): NONE for each that is, TRANSACTION_ABORTABLE for each that is not, or one error for all.
     */
    public Map<TopicPartition, Errors> verifyPartitions(String transactionalId, long producerId, short producerEpoch,
                                                        Set<TopicPartition> partitions) {
        TransactionMetadata metadata = transactions.get(transactionalId);
        Errors error = Errors.NONE;
        if (metadata == null || metadata.producerId() != producerId) {
            error = Errors.INVALID_PRODUCER_ID_MAPPING;
        } else if (metadata.producerEpoch() != producerEpoch) {
            error = Errors.PRODUCER_FENCED;
        } else if (isPrepare(metadata.state())) {
            error = Errors.CONCURRENT_TRANSACTIONS;
        }
        Map<TopicPartition, Errors> result = new LinkedHashMap<>();
        for (TopicPartition partition : partitions) {
            result.put(partition, error != Errors.NONE ? error
                    : metadata.contains(partition) ? Errors.NONE : Errors.TRANSACTION_ABORTABLE);
        }
        return result;
    }

    private static boolean isPrepare(TransactionState state) {
        return state == TransactionState.PREPARE_COMMIT || state == TransactionState.PREPARE_ABORT;
    }

    // ---- EndTxn

    /** EndTxn v0-4 from the producer (Kafka's {@code handleEndTransaction} at the client's transaction.version 0). */
    public CompletableFuture<Errors> endTransaction(String transactionalId, long producerId, short producerEpoch,
                                                    boolean commit) {
        return endTransaction(transactionalId, producerId, producerEpoch, commit, true);
    }

    /**
     * EndTxn from the producer; {@code clientVersion} 2 (EndTxn v5) bumps the epoch (Kafka 4.1's
     * {@code handleEndTransaction}).
     */
    public CompletableFuture<EndResult> endTransaction(String transactionalId, long producerId, short producerEpoch,
                                                       boolean commit, short clientVersion) {
        if (!TransactionMetadata.supportsEpochBump(clientVersion)) {
            return endTransaction(transactionalId, producerId, producerEpoch, commit, true)
                    .thenApply(EndResult::error);
        }
        return EndTransactionV2.endTransaction(this, transactionalId, producerId, producerEpoch, commit, true,
                null);
    }

    /** The coordinator aborts an ongoing transaction it fenced, as the finalized transaction.version says. */
    private CompletableFuture<Errors> abortAsCoordinator(String transactionalId, TxnTransitMetadata fence) {
        if (!TransactionMetadata.supportsEpochBump(transactionVersion.get())) {
            return endTransaction(transactionalId, fence.producerId(), fence.producerEpoch(), false, false);
        }
        return EndTransactionV2.endTransaction(this, transactionalId, fence.producerId(), fence.producerEpoch(),
                false, false, null).thenApply(EndResult::error);
    }

    private CompletableFuture<Errors> endTransaction(String transactionalId, long producerId, short producerEpoch,
                                                     boolean commit, boolean fromClient) {
        TransactionMetadata metadata = transactions.get(transactionalId);
        if (metadata == null || metadata.producerId() != producerId) {
            return done(Errors.INVALID_PRODUCER_ID_MAPPING);
        }
        // A client's epoch must be the current one; the coordinator's own abort carries the fenced (bumped) one.
        if ((fromClient && producerEpoch != metadata.producerEpoch()) || producerEpoch < metadata.producerEpoch()) {
            return done(Errors.PRODUCER_FENCED);
        }
        Optional<TransactionState> pending = metadata.pendingState();
        if (pending.isPresent() && pending.get() != TransactionState.PREPARE_EPOCH_FENCE) {
            return done(Errors.CONCURRENT_TRANSACTIONS);
        }
        switch (metadata.state()) {
            case ONGOING:
                boolean epochFence = !commit && pending.isPresent();
                if (epochFence) {
                    metadata.adoptFencedEpoch(producerEpoch);
                }
                TransactionState next = commit ? TransactionState.PREPARE_COMMIT : TransactionState.PREPARE_ABORT;
                TxnTransitMetadata prepare = metadata.prepareAbortOrCommit(next, (short) 0,
                        TransactionMetadata.NO_PRODUCER_ID, ctx.nowMs(), false);
                return append(metadata, prepare).thenApply(error -> afterPrepare(metadata, prepare, epochFence,
                        error));
            case COMPLETE_COMMIT:
                return done(commit ? Errors.NONE : invalidState(metadata, commit));
            case COMPLETE_ABORT:
                return done(!commit ? Errors.NONE : invalidState(metadata, commit));
            case PREPARE_COMMIT:
                return done(commit ? Errors.CONCURRENT_TRANSACTIONS : invalidState(metadata, commit));
            case PREPARE_ABORT:
                return done(!commit ? Errors.CONCURRENT_TRANSACTIONS : invalidState(metadata, commit));
            case EMPTY:
                return done(invalidState(metadata, commit));
            default:
                throw new IllegalStateException("Transactional id " + transactionalId + " is in state "
                        + metadata.state().stateName() + ", which it never stays in");
        }
    }

    /** PrepareCommit/PrepareAbort is written (or not): the client's answer, and the markers start. */
    private Errors afterPrepare(TransactionMetadata metadata, TxnTransitMetadata prepare, boolean epochFence,
                                Errors error) {
        if (error != Errors.NONE) {
            if (epochFence && !closed) {
                metadata.markFailedEpochFence();
                LOGGER.warn("Could not write the epoch fence of transactional id {}: {}; epoch {} was not handed out",
                        metadata.transactionalId(), error, prepare.producerEpoch());
            }
            return error;
        }
        if (metadata.producerId() != prepare.producerId()) {
            return Errors.INVALID_PRODUCER_ID_MAPPING;
        }
        if (metadata.producerEpoch() != prepare.producerEpoch()) {
            return Errors.PRODUCER_FENCED;
        }
        if (metadata.pendingTransitionInProgress()) {
            return Errors.CONCURRENT_TRANSACTIONS;
        }
        sendMarkers(metadata, metadata.prepareComplete(ctx.nowMs()));
        return Errors.NONE;
    }

    private static Errors invalidState(TransactionMetadata metadata, boolean commit) {
        LOGGER.debug("Transactional id {} is in state {}, cannot {}", metadata.transactionalId(),
                metadata.state().stateName(), commit ? "commit" : "abort");
        return Errors.INVALID_TXN_STATE;
    }

    // ---- markers

    /** Writes the markers of the prepared transaction, then {@code complete} (CompleteCommit/CompleteAbort). */
    void sendMarkers(TransactionMetadata metadata, TxnTransitMetadata complete) {
        boolean commit = complete.state() == TransactionState.COMPLETE_COMMIT;
        Collection<TopicPartition> partitions = metadata.topicPartitions();
        markers.writeMarkers(metadata.transactionalId(), metadata.producerId(), metadata.producerEpoch(), commit,
                coordinatorEpoch, partitions).whenComplete((ignored, failure) -> coordinatorThread.execute(() -> {
                    if (closed || transactions.get(metadata.transactionalId()) != metadata) {
                        return;
                    }
                    if (failure != null) {
                        LOGGER.info("Stopped writing the markers of transactional id {}: {}",
                                metadata.transactionalId(), failure.toString());
                        return;
                    }
                    writeComplete(metadata, complete);
                }));
    }

    private void writeComplete(TransactionMetadata metadata, TxnTransitMetadata complete) {
        ctx.write(List.of(record(metadata, complete))).whenComplete(
                (ignored, failure) -> {
                    if (closed || transactions.get(metadata.transactionalId()) != metadata) {
                        return;
                    }
                    if (failure == null) {
                        metadata.completeTransitionTo(complete);
                        LOGGER.debug("Completed the transaction of {}: {}", metadata.transactionalId(),
                                complete.state().stateName());
                        return;
                    }
                    Errors error = writeError(failure);
                    if (error == Errors.COORDINATOR_NOT_AVAILABLE) {
                        ctx.schedule("complete-" + metadata.transactionalId(), COMPLETE_RETRY_BACKOFF_MS,
                                () -> writeComplete(metadata, complete));
                    } else if (error == Errors.NOT_COORDINATOR) {
                        LOGGER.info("No longer the coordinator of {}: its {} is left to the next one",
                                metadata.transactionalId(), complete.state().stateName());
                    } else {
                        LOGGER.error("Cannot write {} of transactional id {}: {}", complete.state().stateName(),
                                metadata.transactionalId(), error);
                    }
                });
    }

    // ---- writes

    /** Kafka's {@code appendTransactionToLog}: writes the transition and applies it once committed. */
    CompletableFuture<Errors> append(TransactionMetadata metadata, TxnTransitMetadata transit) {
        return ctx.write(List.of(record(metadata, transit))).handle(
                (ignored, failure) -> {
                    if (closed || transactions.get(metadata.transactionalId()) != metadata) {
                        return Errors.NOT_COORDINATOR;
                    }
                    if (failure != null) {
                        metadata.abortPendingTransition();
                        return writeError(failure);
                    }
                    metadata.completeTransitionTo(transit);
                    return Errors.NONE;
                });
    }

    private CoordinatorRecord record(TransactionMetadata metadata, TxnTransitMetadata transit) {
        return TransactionLog.record(metadata.transactionalId(), transit,
                TransactionLog.valueVersion(transactionVersion.get()));
    }

    // ---- for EndTransactionV2 (same thread)

    TransactionMetadata metadata(String transactionalId) {
        return transactions.get(transactionalId);
    }

    long nowMs() {
        return ctx.nowMs();
    }

    /** Runs {@code then} with a new producer id on the coordinator thread (NOT_COORDINATOR once unloaded). */
    <T> CompletableFuture<T> withProducerId(Function<Long, CompletableFuture<T>> then, Function<Errors, T> onError) {
        CompletableFuture<T> result = new CompletableFuture<>();
        producerIds.get().whenComplete((id, failure) -> coordinatorThread.execute(() -> {
            if (closed) {
                result.complete(onError.apply(Errors.NOT_COORDINATOR));
            } else if (failure != null) {
                result.complete(onError.apply(Errors.forException(failure)));
            } else {
                then.apply(id).whenComplete((value, error) -> {
                    if (error != null) {
                        result.completeExceptionally(error);
                    } else {
                        result.complete(value);
                    }
                });
            }
        }));
        return result;
    }

    boolean closed() {
        return closed;
    }

    /** Kafka's mapping of the errors of a write to {@code __transaction_state}. */
    static Errors writeError(Throwable failure) {
        return CoordinatorWriteErrors.operationError(failure);
    }

    // ---- timers

    private void scheduleAbortTimedOut() {
        ctx.schedule("abort-timed-out", config.abortTimedOutIntervalMs(), () -> {
            scheduleAbortTimedOut();
            abortTimedOutTransactions();
        });
    }

    private void scheduleExpiry() {
        ctx.schedule("expire-transactional-ids", config.removeExpiredIntervalMs(), () -> {
            scheduleExpiry();
            expireTransactionalIds();
        });
    }

    /** Kafka's {@code abortTimedOutTransactions}: ongoing transactions past their timeout are fenced and aborted. */
    void abortTimedOutTransactions() {
        long now = ctx.nowMs();
        for (TransactionMetadata metadata : List.copyOf(transactions.values())) {
            if (metadata.state() != TransactionState.ONGOING || metadata.pendingTransitionInProgress()
                    || metadata.txnStartTimestamp() + metadata.txnTimeoutMs() >= now) {
                continue;
            }
            if (metadata.producerEpoch() == Short.MAX_VALUE) {
                // Only a failed fence leaves an ongoing transaction at this epoch; Kafka cannot fence it either.
                LOGGER.error("Cannot abort the timed-out transaction of {}: producer {} is at the last epoch",
                        metadata.transactionalId(), metadata.producerId());
                continue;
            }
            TxnTransitMetadata fence = metadata.prepareFenceProducerEpoch();
            String id = metadata.transactionalId();
            LOGGER.info("Aborting the transaction of transactional id {} (producer {}), which timed out after {} ms",
                    id, fence.producerId(), metadata.txnTimeoutMs());
            abortAsCoordinator(id, fence).thenAccept(error -> {
                if (error != Errors.NONE) {
                    LOGGER.info("The abort of the timed-out transaction of {} failed: {}", id, error);
                }
            });
        }
    }

    /**
     * Kafka's {@code removeExpiredTransactionalIds}: ids without an open transaction whose last update is older
     * than transactional.id.expiration.ms become Dead (tombstones, written in batches) and are forgotten.
     */
    void expireTransactionalIds() {
        long now = ctx.nowMs();
        List<CoordinatorRecord> batch = new ArrayList<>();
        Map<TransactionMetadata, TxnTransitMetadata> dying = new LinkedHashMap<>();
        int bytes = 0;
        for (TransactionMetadata metadata : List.copyOf(transactions.values())) {
            if (!metadata.state().isComplete() || metadata.pendingTransitionInProgress()
                    || metadata.txnLastUpdateTimestamp() > now - config.transactionalIdExpirationMs()) {
                continue;
            }
            dying.put(metadata, metadata.prepareDead());
            batch.add(record(metadata, dying.get(metadata)));
            bytes += 64 + 3 * metadata.transactionalId().length();
            if (bytes >= MAX_TOMBSTONE_BATCH_BYTES) {
                writeTombstones(batch, dying);
                batch = new ArrayList<>();
                dying = new LinkedHashMap<>();
                bytes = 0;
            }
        }
        if (!batch.isEmpty()) {
            writeTombstones(batch, dying);
        }
    }

    private void writeTombstones(List<CoordinatorRecord> batch, Map<TransactionMetadata, TxnTransitMetadata> dying) {
        ctx.write(batch).whenComplete((ignored, failure) -> {
            if (closed) {
                return;
            }
            for (Map.Entry<TransactionMetadata, TxnTransitMetadata> entry : dying.entrySet()) {
                TransactionMetadata metadata = entry.getKey();
                if (transactions.get(metadata.transactionalId()) != metadata) {
                    continue;
                }
                if (failure != null) {
                    metadata.abortPendingTransition();
                } else {
                    metadata.completeTransitionTo(entry.getValue());
                    transactions.remove(metadata.transactionalId());
                }
            }
            if (failure != null) {
                LOGGER.warn("Cannot expire {} transactional id(s) of __transaction_state-{}: {}", dying.size(),
                        ctx.partitionIndex(), writeError(failure));
            } else {
                LOGGER.info("Expired {} transactional id(s) of __transaction_state-{}", dying.size(),
                        ctx.partitionIndex());
            }
        });
    }

    // ---- DescribeTransactions, ListTransactions

    /** DescribeTransactions of one id (Kafka's {@code handleDescribeTransactions}). */
    public DescribeTransactionsResponseData.TransactionState describe(String transactionalId) {
        DescribeTransactionsResponseData.TransactionState described =
                new DescribeTransactionsResponseData.TransactionState().setTransactionalId(transactionalId);
        TransactionMetadata metadata = transactions.get(transactionalId);
        if (metadata == null || metadata.state() == TransactionState.DEAD) {
            return described.setErrorCode(Errors.TRANSACTIONAL_ID_NOT_FOUND.code());
        }
        Map<String, List<Integer>> byTopic = new TreeMap<>();
        metadata.topicPartitions().stream().sorted((a, b) -> Integer.compare(a.partition(), b.partition()))
                .forEach(tp -> byTopic.computeIfAbsent(tp.topic(), t -> new ArrayList<>()).add(tp.partition()));
        byTopic.forEach((topic, partitions) -> described.topics().add(
                new DescribeTransactionsResponseData.TopicData().setTopic(topic).setPartitions(partitions)));
        return described.setErrorCode(Errors.NONE.code()).setProducerId(metadata.producerId())
                .setProducerEpoch(metadata.producerEpoch()).setTransactionState(metadata.state().stateName())
                .setTransactionTimeoutMs(metadata.txnTimeoutMs())
                .setTransactionStartTimeMs(metadata.txnStartTimestamp());
    }

    /**
     * The filters of ListTransactions (Kafka's {@code listTransactionStates}). Immutable.
     *
     * @param states      the states to list; empty lists all
     * @param producerIds the producer ids to list; empty lists all
     * @param durationMs  v1+ (KIP-994): only transactions running longer than this; negative lists all
     * @param idPattern   v2+ (KIP-1152): only ids the pattern matches whole; null lists all
     */
    public record ListFilter(Set<TransactionState> states, Set<Long> producerIds, long durationMs,
                             Pattern idPattern) {
    }

    /** Adds the transactions of this shard that pass {@code filter} to {@code into}. */
    public void list(ListFilter filter, List<ListTransactionsResponseData.TransactionState> into) {
        long now = ctx.nowMs();
        for (TransactionMetadata metadata : transactions.values()) {
            if (metadata.state() == TransactionState.DEAD
                    || (!filter.producerIds().isEmpty() && !filter.producerIds().contains(metadata.producerId()))
                    || (!filter.states().isEmpty() && !filter.states().contains(metadata.state()))
                    || (filter.durationMs() >= 0 && now - metadata.txnStartTimestamp() <= filter.durationMs())
                    || (filter.idPattern() != null
                            && !filter.idPattern().matcher(metadata.transactionalId()).matches())) {
                continue;
            }
            into.add(new ListTransactionsResponseData.TransactionState()
                    .setTransactionalId(metadata.transactionalId()).setProducerId(metadata.producerId())
                    .setTransactionState(metadata.state().stateName()));
        }
    }

    private static <T> CompletableFuture<T> done(T value) {
        return CompletableFuture.completedFuture(value);
    }
}
