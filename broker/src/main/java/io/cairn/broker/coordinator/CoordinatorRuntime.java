package io.cairn.broker.coordinator;

import io.cairn.broker.purgatory.PartitionPurgatory;
import io.cairn.broker.purgatory.Timer;
import io.cairn.isr.Partition;
import io.cairn.isr.PartitionListener;
import io.cairn.isr.ReplicaManager;
import io.cairn.log.Time;
import io.cairn.log.producer.VerificationGuard;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.CoordinatorLoadInProgressException;
import io.cairn.wire.error.CoordinatorNotAvailableException;
import io.cairn.wire.error.NotCoordinatorException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongConsumer;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The runtime of one coordinator kind (Kafka's {@code CoordinatorRuntime}): one shard per partition of the kind's
 * internal topic this broker leads. A shard is created when the leadership starts and loaded by replaying the
 * partition's log on the loader thread (operations meanwhile fail with COORDINATOR_LOAD_IN_PROGRESS); it is dropped
 * when the leadership ends or its epoch changes (NOT_COORDINATOR, pending writes fail, timers stop). Operations run on
 * their shard; writes are batched across operations and answered once committed ({@link LoadedShard}).
 *
 * <p>Threads: {@code threads} coordinator threads shared by the shards; a partition's tasks (operations, timer
 * tasks, write completions, load and unload) run in order, one at a time, on whichever thread is free
 * ({@link SerialExecutor}), so a shard is never run concurrently and never needs locks. Loading reads the log on one
 * loader thread. Timers (and the append linger) run on the {@link Timer} the runtime is given, which it owns, and
 * hand their task to the shard's executor.
 *
 * <p>Thread-safety: thread-safe.
 *
 * @param <S> the kind's shard type
 * @param <R> the kind's record type
 */
public final class CoordinatorRuntime<S extends CoordinatorShard<R>, R> implements AutoCloseable {

    private static final Logger LOGGER = LogManager.getLogger(CoordinatorRuntime.class);
    /** The sequence of a coordinator's batches: the log keeps none for them. */
    private static final int NO_SEQUENCE = -1;

    /** One partition: its executor and, confined to it, the shard of its current leadership. */
    private final class Slot {
        final int index;
        final SerialExecutor executor;
        LoadedShard<S, R> current;

        Slot(int index) {
            this.index = index;
            this.executor = new SerialExecutor(pool, config.topic() + "-" + index);
        }
    }

    private final CoordinatorRuntimeConfig<S, R> config;
    private final ReplicaManager replicaManager;
    private final PartitionPurgatory purgatory;
    private final Timer timer;
    private final Time time;
    private final ExecutorService pool;
    private final ExecutorService loader;
    private final Map<Integer, Slot> slots = new ConcurrentHashMap<>();
    /** Written by {@link #close}, read by every caller. */
    private volatile boolean closed;
    /** Told each load's milliseconds (metrics); set once at start-up, read on the loader thread. */
    private volatile LongConsumer loadTimes = ms -> { };

    /**
     * @param purgatory where writes wait for the high watermark
     * @param timer     runs the shards' timers and the append linger; owned (closed) by the runtime
     */
    public CoordinatorRuntime(CoordinatorRuntimeConfig<S, R> config, ReplicaManager replicaManager,
                              PartitionPurgatory purgatory, Timer timer, Time time) {
        this.config = config;
        this.replicaManager = replicaManager;
        this.purgatory = purgatory;
        this.timer = timer;
        this.time = time;
        AtomicInteger threadIds = new AtomicInteger();
        this.pool = Executors.newFixedThreadPool(config.settings().threads(),
            r -> daemon(r, "cairn-" + config.name() + "-" + threadIds.getAndIncrement()));
        this.loader = Executors.newSingleThreadExecutor(r -> daemon(r, "cairn-" + config.name() + "-loader"));
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    /** Follows the leadership of the topic's partitions, loading those this broker leads already. */
    public void start() {
        replicaManager.addListener(new PartitionListener() {
            @Override
            public void onHighWatermarkAdvanced(Partition partition) {
            }

            @Override
            public void onLeadershipChanged(Partition partition) {
                if (config.topic().equals(partition.topic())) {
                    refreshLater(partition.partitionIndex());
                }
            }
        });
        for (Partition partition : replicaManager.allPartitions()) {
            if (config.topic().equals(partition.topic())) {
                refreshLater(partition.partitionIndex());
            }
        }
    }

    /**
     * Runs {@code op} on the shard of partition {@code index}. Fails with NOT_COORDINATOR when this broker does not
     * lead it, COORDINATOR_LOAD_IN_PROGRESS while it loads, COORDINATOR_NOT_AVAILABLE once stopping.
     */
    public <T> CompletableFuture<T> call(int index, Function<S, CompletableFuture<T>> op) {
        CompletableFuture<T> result = new CompletableFuture<>();
        Slot slot = slot(index);
        if (slot == null) {
            result.completeExceptionally(notCoordinator(index));
            return result;
        }
        run(slot, result, () -> forward(op.apply(activeShard(slot).shard()), result));
        return result;
    }

    /**
     * Runs {@code op} on every shard of this broker (each on its own thread) and lists the results; fails with
     * COORDINATOR_LOAD_IN_PROGRESS while any shard loads, as Kafka's ListGroups answers.
     */
    public <T> CompletableFuture<List<T>> callAll(Function<S, T> op) {
        List<CompletableFuture<Optional<T>>> each = new ArrayList<>();
        for (Slot slot : slots.values()) {
            CompletableFuture<Optional<T>> one = new CompletableFuture<>();
            each.add(one);
            run(slot, one, () -> {
                LoadedShard<S, R> shard = slot.current;
                if (shard != null && shard.state() == LoadedShard.State.LOADING) {
                    throw loadInProgress(slot.index);
                }
                boolean active = shard != null && shard.state() == LoadedShard.State.ACTIVE;
                one.complete(active ? Optional.ofNullable(op.apply(shard.shard())) : Optional.empty());
            });
        }
        return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new)).thenApply(ignored -> {
            List<T> values = new ArrayList<>();
            each.forEach(f -> f.join().ifPresent(values::add));
            return values;
        });
    }

    /** Runs {@code op} on every active shard, ignoring the others (loading ones included); fire and forget. */
    public void forEachActive(Consumer<S> op) {
        for (Slot slot : slots.values()) {
            run(slot, new CompletableFuture<Void>(), () -> {
                LoadedShard<S, R> shard = slot.current;
                if (shard != null && shard.state() == LoadedShard.State.ACTIVE) {
                    op.accept(shard.shard());
                }
            });
        }
    }

    /**
     * Writes the marker ending a transaction of {@code producerId} to partition {@code index}, after every record
     * the shard wrote before, and completes once it is committed and the shard has applied it (Kafka's
     * {@code scheduleTransactionCompletion}). Fails with NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS or
     * COORDINATOR_NOT_AVAILABLE as {@link #call}, and with the write's error (e.g. an older producer epoch than the
     * partition's: INVALID_PRODUCER_EPOCH).
     */
    public CompletableFuture<Void> completeTransaction(int index, long producerId, short producerEpoch,
                                                      int coordinatorEpoch, boolean commit) {
        CompletableFuture<Void> result = new CompletableFuture<>();
        Slot slot = slot(index);
        if (slot == null) {
            result.completeExceptionally(notCoordinator(index));
            return result;
        }
        run(slot, result, () -> forward(activeShard(slot).writeEndTransactionMarker(producerId, producerEpoch,
            coordinatorEpoch, commit), result));
        return result;
    }

    /**
     * Starts the transaction verification of a transactional write of {@code producerId} to partition {@code index}
     * (Kafka's {@code CoordinatorPartitionWriter.maybeStartTransactionVerification}, a coordinator batch having no
     * sequence): the guard its {@link ShardContext#write(List, long, short, VerificationGuard)} must carry once the
     * transaction coordinator verified it, or {@link VerificationGuard#SENTINEL} when the transaction is already
     * ongoing in the partition. {@code supportsEpochBump}: the producer speaks transaction.version 2. Throws
     * NOT_LEADER_OR_FOLLOWER or UNKNOWN_TOPIC_OR_PARTITION when this broker does not lead the partition. Any thread.
     */
    public VerificationGuard startTransactionVerification(int index, long producerId, short producerEpoch,
                                                          boolean supportsEpochBump) {
        return replicaManager.leaderPartition(new TopicPartition(config.topic(), index))
            .maybeStartTransactionVerification(producerId, NO_SEQUENCE, producerEpoch, supportsEpochBump);
    }

    private static <T> void forward(CompletableFuture<T> from, CompletableFuture<T> to) {
        from.whenComplete((value, failure) -> {
            if (failure != null) {
                to.completeExceptionally(failure);
            } else {
                to.complete(value);
            }
        });
    }

    /** Runs {@code task} on the slot's executor; what it throws, or a refusal to run it, fails {@code result}. */
    private void run(Slot slot, CompletableFuture<?> result, Runnable task) {
        if (closed) {
            result.completeExceptionally(notAvailable());
            return;
        }
        try {
            slot.executor.execute(() -> {
                try {
                    task.run();
                } catch (RuntimeException e) {
                    result.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException e) {
            result.completeExceptionally(notAvailable());
        }
    }

    /** The slot of partition {@code index}; null when there is none and this broker has no such partition. */
    private Slot slot(int index) {
        Slot slot = slots.get(index);
        if (slot != null || index < 0) {
            return slot;
        }
        if (replicaManager.partition(new TopicPartition(config.topic(), index)).isEmpty()) {
            return null;
        }
        return slots.computeIfAbsent(index, Slot::new);
    }

    /**
     * Refreshes the shard of a partition this broker hosts, on its executor. Called from the replica manager's
     * listener, possibly while it creates the partition, so it must not look the partition up here.
     */
    private void refreshLater(int index) {
        Slot slot = slots.computeIfAbsent(index, Slot::new);
        run(slot, new CompletableFuture<Void>(), () -> refresh(slot));
    }

    private LoadedShard<S, R> activeShard(Slot slot) {
        LoadedShard<S, R> shard = slot.current;
        if (shard == null || !isCurrent(shard)) {
            refresh(slot);
            shard = slot.current;
        }
        if (shard == null) {
            throw notCoordinator(slot.index);
        }
        if (shard.state() == LoadedShard.State.LOADING) {
            throw loadInProgress(slot.index);
        }
        return shard;
    }

    private boolean isCurrent(LoadedShard<S, R> shard) {
        Partition partition = shard.partition();
        return partition.isLeader() && partition.leaderEpoch() == shard.leaderEpoch()
            && replicaManager.partition(partition.topicPartition()).orElse(null) == partition;
    }

    /** On the slot's executor: loads, reloads or unloads its shard to match this broker's leadership. */
    private void refresh(Slot slot) {
        Partition partition = replicaManager.partition(new TopicPartition(config.topic(), slot.index)).orElse(null);
        LoadedShard<S, R> shard = slot.current;
        boolean leads = partition != null && partition.isLeader();
        if (shard != null && (!leads || !isCurrent(shard))) {
            slot.current = null;
            shard.close();
            LOGGER.info("Unloaded {} (leader epoch {})", shard.partition().topicPartition(), shard.leaderEpoch());
            shard = null;
        }
        if (leads && shard == null && !closed) {
            LoadedShard<S, R> loading = new LoadedShard<>(config, slot.executor, partition, time, timer, purgatory);
            slot.current = loading;
            try {
                loader.execute(() -> load(slot, loading));
            } catch (RejectedExecutionException e) {
                slot.current = null;
            }
        }
    }

    /** On the loader thread: replays the partition into the shard, then activates it on its executor. */
    private void load(Slot slot, LoadedShard<S, R> shard) {
        Partition partition = shard.partition();
        CoordinatorLoader.LoadSummary summary;
        try {
            summary = CoordinatorLoader.load(partition.log(), partition.logEndOffset(), config.serde(),
                shard.shard(), config.loadChunkBytes());
        } catch (Exception e) {
            LOGGER.error("Cannot load {}: it is loaded again on its next use or leadership",
                partition.topicPartition(), e);
            run(slot, new CompletableFuture<Void>(), () -> {
                if (slot.current == shard) {
                    slot.current = null;
                }
                shard.close();
            });
            return;
        }
        run(slot, new CompletableFuture<Void>(), () -> {
            if (slot.current != shard || shard.state() != LoadedShard.State.LOADING) {
                return;
            }
            shard.activate();
            loadTimes.accept(summary.elapsedMs());
            LOGGER.info("Loaded {} (leader epoch {}): {} record(s) and {} transaction marker(s) in {} ms",
                partition.topicPartition(), shard.leaderEpoch(), summary.records(), summary.markers(),
                summary.elapsedMs());
        });
    }

    /** Tells {@code listener} the milliseconds of every partition load from now on (Kafka's partition-load-time). */
    public void onPartitionLoaded(LongConsumer listener) {
        loadTimes = listener;
    }

    private NotCoordinatorException notCoordinator(int index) {
        return new NotCoordinatorException("This broker does not lead " + config.topic() + "-" + index);
    }

    private CoordinatorLoadInProgressException loadInProgress(int index) {
        return new CoordinatorLoadInProgressException(config.topic() + "-" + index + " is being loaded");
    }

    private CoordinatorNotAvailableException notAvailable() {
        return new CoordinatorNotAvailableException("The " + config.name() + " is shutting down");
    }

    /** Unloads every shard (pending writes fail with NOT_COORDINATOR) and stops the threads and the timer. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        List<CompletableFuture<Void>> unloads = new ArrayList<>();
        for (Slot slot : slots.values()) {
            CompletableFuture<Void> unloaded = new CompletableFuture<>();
            unloads.add(unloaded);
            try {
                slot.executor.execute(() -> {
                    LoadedShard<S, R> shard = slot.current;
                    slot.current = null;
                    if (shard != null) {
                        shard.close();
                    }
                    unloaded.complete(null);
                });
            } catch (RejectedExecutionException e) {
                unloaded.complete(null);
            }
        }
        try {
            CompletableFuture.allOf(unloads.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            LOGGER.warn("The shards of {} did not close cleanly: {}", config.name(), e.toString());
        }
        loader.shutdownNow();
        pool.shutdownNow();
        timer.close();
    }
}
