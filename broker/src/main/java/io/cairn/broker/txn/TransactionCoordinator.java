package io.cairn.broker.txn;

import io.cairn.broker.purgatory.PartitionPurgatory;
import io.cairn.isr.Partition;
import io.cairn.isr.PartitionListener;
import io.cairn.isr.ReplicaManager;
import io.cairn.log.Time;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.TopicImage;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.CoordinatorLoadInProgressException;
import io.cairn.wire.error.CoordinatorNotAvailableException;
import io.cairn.wire.error.Errors;
import io.cairn.wire.error.NotCoordinatorException;
import io.cairn.wire.message.DescribeTransactionsResponseData;
import io.cairn.wire.message.ListTransactionsRequestData;
import io.cairn.wire.message.ListTransactionsResponseData;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The transaction coordinator (Kafka's {@code TransactionCoordinator} and {@code TransactionStateManager}): one
 * {@link TransactionShard} per {@code __transaction_state} partition this broker leads, loaded by replaying the
 * partition when the leadership starts (its leader epoch is the coordinator epoch of its markers) and dropped when it
 * ends; a transactional id's requests run on the shard of its partition ({@code abs(hashCode) % partitions}).
 *
 * <p>Thread-safety: thread-safe. Every shard operation, timer and write completion runs on the single
 * {@code cairn-txn-coordinator} thread; loading reads the log on {@code cairn-txn-loader} before the shard serves.
 */
public final class TransactionCoordinator implements AutoCloseable {

    /** Kafka's name of the internal topic of transaction state. */
    public static final String TOPIC = "__transaction_state";

    private static final Logger LOGGER = LogManager.getLogger(TransactionCoordinator.class);

    private final ReplicaManager replicaManager;
    private final MetadataNode metadata;
    private final PartitionPurgatory purgatory;
    private final TransactionConfig config;
    private final Time time;
    private final TransactionMarkerSender markers;
    private final Supplier<CompletableFuture<Long>> producerIds;
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "cairn-txn-coordinator");
        t.setDaemon(true);
        return t;
    });
    private final ExecutorService loader = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "cairn-txn-loader");
        t.setDaemon(true);
        return t;
    });
    /** Shards by partition index; coordinator thread only. */
    private final Map<Integer, TransactionShard> shards = new HashMap<>();
    /** Set by close (any thread), read by every call. */
    private volatile boolean closed;

    /**
     * @param purgatory   where a shard's writes wait for the high watermark
     * @param markers     writes the markers of completed transactions
     * @param producerIds new producer ids (the broker's {@code ProducerIdManager})
     */
    public TransactionCoordinator(ReplicaManager replicaManager, MetadataNode metadata, PartitionPurgatory purgatory,
                                  TransactionConfig config, Time time, TransactionMarkerSender markers,
                                  Supplier<CompletableFuture<Long>> producerIds) {
        this.replicaManager = replicaManager;
        this.metadata = metadata;
        this.purgatory = purgatory;
        this.config = config;
        this.time = time;
        this.markers = markers;
        this.producerIds = producerIds;
    }

    /** Follows the leadership of {@code __transaction_state} partitions, loading those this broker leads already. */
    public void start() {
        replicaManager.addListener(new PartitionListener() {
            @Override
            public void onHighWatermarkAdvanced(Partition partition) {
            }

            @Override
            public void onLeadershipChanged(Partition partition) {
                if (TOPIC.equals(partition.topic()) && !closed) {
                    try {
                        execute(() -> refresh(partition.partitionIndex()));
                    } catch (CoordinatorNotAvailableException e) {
                        // Stopped meanwhile: the next coordinator loads the partition.
                    }
                }
            }
        });
        for (Partition partition : replicaManager.allPartitions()) {
            if (TOPIC.equals(partition.topic())) {
                execute(() -> refresh(partition.partitionIndex()));
            }
        }
    }

    /** The settings. */
    public TransactionConfig config() {
        return config;
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

    /** AddPartitionsToTxn (v0-3, and v4+ without verify_only) and AddOffsetsToTxn: one error for all partitions. */
    public CompletableFuture<Errors> addPartitions(String transactionalId, long producerId, short producerEpoch,
                                                   Set<TopicPartition> partitions) {
        if (transactionalId == null || transactionalId.isEmpty()) {
            return CompletableFuture.completedFuture(Errors.INVALID_REQUEST);
        }
        return call(transactionalId, m -> m.addPartitions(transactionalId, producerId, producerEpoch, partitions))
                .exceptionally(Errors::forException);
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

    /** EndTxn (transaction.version 1). */
    public CompletableFuture<Errors> endTransaction(String transactionalId, long producerId, short producerEpoch,
                                                    boolean commit) {
        if (transactionalId == null || transactionalId.isEmpty()) {
            return CompletableFuture.completedFuture(Errors.INVALID_REQUEST);
        }
        return call(transactionalId, m -> m.endTransaction(transactionalId, producerId, producerEpoch, commit))
                .exceptionally(Errors::forException);
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
        CompletableFuture<ListTransactionsResponseData> result = new CompletableFuture<>();
        try {
            execute(() -> {
                for (TransactionShard shard : shards.values()) {
                    if (shard.state() == TransactionShard.State.LOADING) {
                        result.complete(response.setErrorCode(Errors.COORDINATOR_LOAD_IN_PROGRESS.code()));
                        return;
                    }
                }
                shards.values().forEach(shard -> shard.manager().list(filter, response.transactionStates()));
                result.complete(response.setErrorCode(Errors.NONE.code()));
            });
        } catch (CoordinatorNotAvailableException e) {
            result.complete(response.setErrorCode(Errors.COORDINATOR_NOT_AVAILABLE.code()));
        }
        return result;
    }

    // ---- the runtime

    /**
     * Runs {@code op} on the shard of {@code transactionalId}'s partition. Fails with NOT_COORDINATOR when this
     * broker does not lead it, COORDINATOR_LOAD_IN_PROGRESS while it loads, COORDINATOR_NOT_AVAILABLE once stopping.
     */
    private <T> CompletableFuture<T> call(String transactionalId,
                                          Function<TransactionManager, CompletableFuture<T>> op) {
        CompletableFuture<T> result = new CompletableFuture<>();
        int index = partitionFor(transactionalId);
        try {
            execute(() -> {
                try {
                    op.apply(activeShard(index).manager()).whenComplete((value, failure) -> {
                        if (failure != null) {
                            result.completeExceptionally(failure);
                        } else {
                            result.complete(value);
                        }
                    });
                } catch (RuntimeException e) {
                    result.completeExceptionally(e);
                }
            });
        } catch (CoordinatorNotAvailableException e) {
            result.completeExceptionally(e);
        }
        return result;
    }

    private void execute(Runnable task) {
        if (closed) {
            throw new CoordinatorNotAvailableException("The transaction coordinator is shutting down");
        }
        try {
            thread.execute(() -> {
                try {
                    task.run();
                } catch (RuntimeException e) {
                    LOGGER.error("Transaction coordinator task failed", e);
                }
            });
        } catch (RejectedExecutionException e) {
            throw new CoordinatorNotAvailableException("The transaction coordinator is shutting down");
        }
    }

    private TransactionShard activeShard(int index) {
        TransactionShard shard = shards.get(index);
        if (shard == null || !isCurrent(shard)) {
            refresh(index);
            shard = shards.get(index);
        }
        if (shard == null) {
            throw new NotCoordinatorException("This broker does not lead " + TOPIC + "-" + index);
        }
        if (shard.state() == TransactionShard.State.LOADING) {
            throw new CoordinatorLoadInProgressException("The transactions of " + TOPIC + "-" + index
                    + " are being loaded");
        }
        return shard;
    }

    private boolean isCurrent(TransactionShard shard) {
        Partition partition = shard.partition();
        return partition.isLeader() && partition.leaderEpoch() == shard.leaderEpoch()
                && replicaManager.partition(partition.topicPartition()).orElse(null) == partition;
    }

    /** Loads, reloads or unloads the shard of partition {@code index} to match this broker's leadership. */
    private void refresh(int index) {
        if (closed) {
            return;
        }
        Partition partition = replicaManager.partition(new TopicPartition(TOPIC, index)).orElse(null);
        TransactionShard shard = shards.get(index);
        boolean leads = partition != null && partition.isLeader();
        if (shard != null && (!leads || !isCurrent(shard))) {
            shards.remove(index);
            shard.close();
            LOGGER.info("Resigned as the transaction coordinator of {}-{} (coordinator epoch {})", TOPIC, index,
                    shard.leaderEpoch());
            shard = null;
        }
        if (leads && shard == null) {
            TransactionShard loading = new TransactionShard(partition, partition.leaderEpoch(), thread, time,
                    purgatory, config, markers, producerIds);
            shards.put(index, loading);
            LOGGER.info("Elected as the transaction coordinator of {}-{} (coordinator epoch {})", TOPIC, index,
                    loading.leaderEpoch());
            loader.execute(() -> load(loading));
        }
    }

    private void load(TransactionShard shard) {
        Partition partition = shard.partition();
        long start = time.milliseconds();
        TransactionLogLoader.LoadSummary summary;
        try {
            summary = TransactionLogLoader.load(partition.log(), partition.logEndOffset(), shard.manager()::replay,
                    config.loadBufferSize());
        } catch (Exception e) {
            LOGGER.error("Cannot load the transactions of {}: the partition stays unavailable as coordinator until "
                    + "its next leadership", partition.topicPartition(), e);
            execute(() -> {
                if (shards.get(partition.partitionIndex()) == shard) {
                    shards.remove(partition.partitionIndex());
                }
                shard.close();
            });
            return;
        }
        execute(() -> {
            if (shards.get(partition.partitionIndex()) != shard || shard.state() != TransactionShard.State.LOADING) {
                return;
            }
            shard.activate();
            LOGGER.info("Loaded the transactions of {} (coordinator epoch {}) from {} record(s) in {} ms",
                    partition.topicPartition(), shard.leaderEpoch(), summary.records(), time.milliseconds() - start);
        });
    }

    /** Partition indexes of the shards, loading or active (tests). */
    CompletableFuture<List<Integer>> shardIndexes() {
        CompletableFuture<List<Integer>> result = new CompletableFuture<>();
        execute(() -> result.complete(new ArrayList<>(shards.keySet())));
        return result;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        try {
            thread.submit(() -> {
                shards.values().forEach(TransactionShard::close);
                shards.clear();
            }).get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            LOGGER.warn("Transaction coordinator shards did not close cleanly: {}", e.toString());
        }
        closed = true;
        loader.shutdownNow();
        thread.shutdownNow();
    }
}
