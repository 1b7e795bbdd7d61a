package io.cairn.broker.txn;

import io.cairn.broker.coordinator.CoordinatorRuntime;
import io.cairn.broker.coordinator.CoordinatorRuntimeConfig;
import io.cairn.broker.coordinator.CoordinatorRuntimeSettings;
import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.purgatory.PartitionPurgatory;
import io.cairn.broker.purgatory.SystemTimer;
import io.cairn.isr.ReplicaManager;
import io.cairn.log.Time;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.Features;
import io.cairn.metadata.image.TopicImage;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.DescribeTransactionsResponseData;
import io.cairn.wire.message.ListTransactionsRequestData;
import io.cairn.wire.message.ListTransactionsResponseData;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.LongConsumer;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * The transaction coordinator (Kafka's {@code TransactionCoordinator} and {@code TransactionStateManager}): the
 * transaction kind of the {@link CoordinatorRuntime}, one {@link TransactionShard} per {@code __transaction_state}
 * partition this broker leads (loaded by replaying the partition when the leadership starts, its leader epoch the
 * coordinator epoch of its markers, dropped when it ends); a transactional id's requests run on the shard of its
 * partition ({@code abs(hashCode) % partitions}).
 *
 * <p>Thread-safety: thread-safe. Shards run on the runtime's one thread, {@code cairn-txn-coordinator-0}, loading
 * on {@code cairn-txn-coordinator-loader}.
 */
public final class TransactionCoordinator implements AutoCloseable {

    /** Kafka's name of the internal topic of transaction state. */
    public static final String TOPIC = "__transaction_state";
    /**
     * The runtime's threads. Kafka 4.1 has no setting for them (its transaction coordinator runs on the request
     * handlers and one scheduler thread), so Cairn runs every transaction shard on one thread of its own.
     */
    static final int THREADS = 1;
    /**
     * How long a write to the transaction log waits for the ISR before COORDINATOR_NOT_AVAILABLE: Kafka's
     * request.timeout.ms default (Kafka has no transaction-log key for it either).
     */
    static final long WRITE_TIMEOUT_MS = 30_000L;

    private final MetadataNode metadata;
    private final TransactionConfig config;
    private final CoordinatorRuntime<TransactionShard, CoordinatorRecord> runtime;

    /**
     * @param purgatory   where a shard's writes wait for the high watermark
     * @param markers     writes the markers of completed transactions
     * @param producerIds new producer ids (the broker's {@code ProducerIdManager})
     */
    public TransactionCoordinator(ReplicaManager replicaManager, MetadataNode metadata, PartitionPurgatory purgatory,
                                  TransactionConfig config, Time time, TransactionMarkerSender markers,
                                  Supplier<CompletableFuture<Long>> producerIds) {
        this.metadata = metadata;
        this.config = config;
        // Every state change is written at once, as Kafka's TransactionStateManager appends each transition.
        CoordinatorRuntimeSettings settings = new CoordinatorRuntimeSettings(THREADS, 0, WRITE_TIMEOUT_MS);
        CoordinatorRuntimeConfig<TransactionShard, CoordinatorRecord> kind = new CoordinatorRuntimeConfig<>(
                "txn-coordinator", TOPIC, settings, TransactionLogSerde.INSTANCE,
                ctx -> new TransactionShard(ctx, config, markers, producerIds, this::transactionVersion),
                config.loadBufferSize());
        this.runtime = new CoordinatorRuntime<>(kind, replicaManager, purgatory, new SystemTimer("txn-coordinator"),
                time);
    }

    /** Follows the leadership of {@code __transaction_state} partitions, loading those this broker leads already. */
    public void start() {
        runtime.start();
    }

    /** The settings. */
    public TransactionConfig config() {
        return config;
    }

    /** The finalized transaction.version (KIP-890): 2 bumps the epoch per transaction and adds from produce. */
    public short transactionVersion() {
        return Features.transactionVersion(metadata.currentImage());
    }

    /** The topic's image, if it exists. */
    public Optional<TopicImage> topic() {
        return metadata.currentImage().topic(TOPIC);
    }

    /** The partition count: the topic's, or transaction.state.log.num.partitions before it exists. */
    public int partitionCount() {
        return topic().map(t -> t.partitions().size()).orElse(config.logNumPartitions());
    }

    /** The {@code __transaction_state} partition of a transactional id. */
    public int partitionFor(String transactionalId) {
        return partitionFor(transactionalId, partitionCount());
    }

    /** Kafka's {@code Utils.abs(transactionalId.hashCode) % partitions}. */
    public static int partitionFor(String transactionalId, int partitions) {
        int hash = transactionalId.hashCode();
        return (hash == Integer.MIN_VALUE ? 0 : Math.abs(hash)) % partitions;
    }

    // ---- the APIs

    /** InitProducerId with a transactional id: INVALID_REQUEST for an empty id, INVALID_TRANSACTION_TIMEOUT, ... */
    public CompletableFuture<TransactionManager.InitResult> initProducerId(String transactionalId, int timeoutMs,
            Optional<TransactionManager.ProducerIdAndEpoch> expected) {
        if (transactionalId.isEmpty()) {
            return CompletableFuture.completedFuture(TransactionManager.InitResult.error(Errors.INVALID_REQUEST));
        }
        if (!config.validTimeout(timeoutMs)) {
            return CompletableFuture.completedFuture(
                    TransactionManager.InitResult.error(Errors.INVALID_TRANSACTION_TIMEOUT));
        }
        return call(transactionalId, m -> m.initProducerId(transactionalId, timeoutMs, expected))
                .exceptionally(failure -> TransactionManager.InitResult.error(Errors.forException(failure)));
    }

    /**
     * AddPartitionsToTxn (v0-3 at the client's transaction.version 0, v4+ without verify_only at 2: a broker adds
     * them for the producer) and AddOffsetsToTxn (0): one error for all partitions.
     */
    public CompletableFuture<Errors> addPartitions(String transactionalId, long producerId, short producerEpoch,
                                                   Set<TopicPartition> partitions, short clientVersion) {
        if (transactionalId == null || transactionalId.isEmpty()) {
            return CompletableFuture.completedFuture(Errors.INVALID_REQUEST);
        }
        return call(transactionalId, m -> m.addPartitions(transactionalId, producerId, producerEpoch, partitions,
                clientVersion)).exceptionally(Errors::forException);
    }

    /** AddPartitionsToTxn v4+ with verify_only: an error per partition. */
    public CompletableFuture<Map<TopicPartition, Errors>> verifyPartitions(String transactionalId, long producerId,
            short producerEpoch, Set<TopicPartition> partitions) {
        if (transactionalId == null || transactionalId.isEmpty()) {
            return CompletableFuture.completedFuture(allOf(partitions, Errors.INVALID_REQUEST));
        }
        return call(transactionalId, m -> CompletableFuture.completedFuture(
                m.verifyPartitions(transactionalId, producerId, producerEpoch, partitions)))
                .exceptionally(failure -> allOf(partitions, Errors.forException(failure)));
    }

    private static Map<TopicPartition, Errors> allOf(Set<TopicPartition> partitions, Errors error) {
        Map<TopicPartition, Errors> result = new LinkedHashMap<>();
        partitions.forEach(p -> result.put(p, error));
        return result;
    }

    /** EndTxn; {@code clientVersion} 2 (EndTxn v5) bumps the epoch and names the next producer id and epoch. */
    public CompletableFuture<TransactionManager.EndResult> endTransaction(String transactionalId, long producerId,
            short producerEpoch, boolean commit, short clientVersion) {
        if (transactionalId == null || transactionalId.isEmpty()) {
            return CompletableFuture.completedFuture(TransactionManager.EndResult.error(Errors.INVALID_REQUEST));
        }
        return call(transactionalId, m -> m.endTransaction(transactionalId, producerId, producerEpoch, commit,
                clientVersion)).exceptionally(failure -> TransactionManager.EndResult.error(
                        Errors.forException(failure)));
    }

    /** DescribeTransactions of one id. */
    public CompletableFuture<DescribeTransactionsResponseData.TransactionState> describe(String transactionalId) {
        DescribeTransactionsResponseData.TransactionState error =
                new DescribeTransactionsResponseData.TransactionState().setTransactionalId(transactionalId);
        if (transactionalId.isEmpty()) {
            return CompletableFuture.completedFuture(error.setErrorCode(Errors.INVALID_REQUEST.code()));
        }
        return call(transactionalId, m -> CompletableFuture.completedFuture(m.describe(transactionalId)))
                .exceptionally(failure -> error.setErrorCode(Errors.forException(failure).code()));
    }

    /**
     * ListTransactions over every shard: COORDINATOR_LOAD_IN_PROGRESS while one loads, INVALID_REGULAR_EXPRESSION
     * for a v2 pattern that does not compile, unknown state filters reported back (and, as in Kafka, not filtering).
     */
    public CompletableFuture<ListTransactionsResponseData> list(ListTransactionsRequestData request) {
        ListTransactionsResponseData response = new ListTransactionsResponseData().setThrottleTimeMs(0);
        Set<TransactionState> states = new HashSet<>();
        for (String name : request.stateFilters()) {
            Optional<TransactionState> state = TransactionState.fromName(name);
            if (state.isPresent()) {
                states.add(state.get());
            } else {
                response.unknownStateFilters().add(name);
            }
        }
        Pattern pattern = null;
        String regex = request.transactionalIdPattern();
        if (regex != null && !regex.isEmpty()) {
            try {
                pattern = Pattern.compile(regex);
            } catch (PatternSyntaxException e) {
                return CompletableFuture.completedFuture(response
                        .setErrorCode(Errors.INVALID_REGULAR_EXPRESSION.code()));
            }
        }
        TransactionManager.ListFilter filter = new TransactionManager.ListFilter(states,
                new HashSet<>(request.producerIdFilters()), request.durationFilter(), pattern);
        return runtime.callAll(shard -> {
            List<ListTransactionsResponseData.TransactionState> found = new ArrayList<>();
            shard.manager().list(filter, found);
            return found;
        }).handle((lists, failure) -> {
            if (failure != null) {
                return response.setErrorCode(Errors.forException(failure).code());
            }
            lists.forEach(response.transactionStates()::addAll);
            return response.setErrorCode(Errors.NONE.code());
        });
    }

    /**
     * Runs {@code op} on the shard of {@code transactionalId}'s partition. Fails with NOT_COORDINATOR when this
     * broker does not lead it, COORDINATOR_LOAD_IN_PROGRESS while it loads, COORDINATOR_NOT_AVAILABLE once stopping.
     */
    private <T> CompletableFuture<T> call(String transactionalId,
                                          Function<TransactionManager, CompletableFuture<T>> op) {
        return runtime.call(partitionFor(transactionalId), shard -> op.apply(shard.manager()));
    }

    /** Tells {@code listener} the milliseconds of every {@code __transaction_state} partition load (metrics). */
    public void onPartitionLoaded(LongConsumer listener) {
        runtime.onPartitionLoaded(listener);
    }

    @Override
    public void close() {
        runtime.close();
    }
}
