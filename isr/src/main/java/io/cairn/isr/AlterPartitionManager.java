package io.cairn.isr;

import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AlterPartitionRequestData;
import io.cairn.wire.message.AlterPartitionResponseData;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Sends the ISR changes of this broker's leaders to the active controller (Kafka's {@code AlterPartitionManager}):
 * a partition submits one proposal at a time (a second one while the first is queued or in flight fails at once
 * with OPERATION_NOT_ATTEMPTED), queued proposals go out batched in one AlterPartition request with this broker's id
 * and current broker epoch, at most one request is in flight, and each partition's future completes with the
 * controller's answer for it ({@link LeaderAndIsr}) or fails with its error code. A top-level error or a failed
 * send keeps the whole batch queued and retries it after {@link #RETRY_BACKOFF_MS}; a partition missing from the
 * answer stays queued for the next request.
 *
 * <p>Thread-safety: thread-safe. The queue is guarded by this object's monitor; requests are built and answers
 * handled (and the partitions' callbacks run) on the {@link Scheduler}'s thread, {@code cairn-alter-partition} in
 * production, never on a network or metadata thread.
 */
public final class AlterPartitionManager implements AutoCloseable {

    /** Delay before a batch that failed as a whole is sent again (Kafka's 50 ms). */
    public static final long RETRY_BACKOFF_MS = 50L;

    private static final Logger LOGGER = LogManager.getLogger(AlterPartitionManager.class);

    /** Where the manager's work runs; tests run it by hand. Implementations are thread-safe. */
    public interface Scheduler {

        void execute(Runnable task);

        void schedule(Runnable task, long delayMs);

        /** Stops running tasks. */
        void shutdown();
    }

    private record Item(TopicPartition topicPartition, Uuid topicId, LeaderAndIsr proposal,
                        CompletableFuture<LeaderAndIsr> future) {
    }

    private final int brokerId;
    private final LongSupplier brokerEpoch;
    private final Function<AlterPartitionRequestData, CompletableFuture<AlterPartitionResponseData>> controller;
    private final Scheduler scheduler;
    /** Proposals not yet answered, one per partition, in submission order; guarded by {@code this}. */
    private final Map<TopicPartition, Item> unsent = new LinkedHashMap<>();
    /** Guarded by {@code this}. */
    private boolean inflight;
    /** Guarded by {@code this}. */
    private boolean closed;

    /**
     * @param brokerId    this broker's id
     * @param brokerEpoch this broker's current epoch, read for every request
     * @param controller  sends a request to the active controller; the future completes with its answer once its
     *                    records are committed, or fails when no controller took it
     * @param scheduler   where requests are built and answers handled
     */
    public AlterPartitionManager(int brokerId, LongSupplier brokerEpoch,
                                 Function<AlterPartitionRequestData, CompletableFuture<AlterPartitionResponseData>>
                                     controller, Scheduler scheduler) {
        this.brokerId = brokerId;
        this.brokerEpoch = brokerEpoch;
        this.controller = controller;
        this.scheduler = scheduler;
    }

    /** A manager whose work runs on a thread of its own, {@code cairn-alter-partition}, stopped by {@link #close}. */
    public static AlterPartitionManager start(int brokerId, LongSupplier brokerEpoch,
            Function<AlterPartitionRequestData, CompletableFuture<AlterPartitionResponseData>> controller) {
        ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "cairn-alter-partition");
            t.setDaemon(true);
            return t;
        });
        return new AlterPartitionManager(brokerId, brokerEpoch, controller, new Scheduler() {
            @Override
            public void execute(Runnable task) {
                try {
                    executor.execute(task);
                } catch (RejectedExecutionException e) {
                    LOGGER.debug("AlterPartition manager closed; dropping a task");
                }
            }

            @Override
            public void schedule(Runnable task, long delayMs) {
                try {
                    executor.schedule(task, delayMs, TimeUnit.MILLISECONDS);
                } catch (RejectedExecutionException e) {
                    LOGGER.debug("AlterPartition manager closed; dropping a retry");
                }
            }

            @Override
            public void shutdown() {
                executor.shutdownNow();
            }
        });
    }

    /**
     * Queues {@code proposal} for the partition; the future completes on the manager's thread with the committed
     * state, or fails with the controller's error for the partition (an {@link io.cairn.wire.error.ApiException}).
     */
    public CompletableFuture<LeaderAndIsr> submit(TopicPartition tp, Uuid topicId, LeaderAndIsr proposal) {
        CompletableFuture<LeaderAndIsr> future = new CompletableFuture<>();
        boolean queued;
        synchronized (this) {
            queued = !closed && unsent.putIfAbsent(tp, new Item(tp, topicId, proposal, future)) == null;
        }
        if (!queued) {
            future.completeExceptionally(Errors.OPERATION_NOT_ATTEMPTED.exception("Failed to enqueue ISR change "
                + "state " + proposal + " for partition " + tp));
            return future;
        }
        scheduler.execute(this::maybePropagateIsrChanges);
        return future;
    }

    /** Sends every queued proposal when no request is in flight. */
    private void maybePropagateIsrChanges() {
        List<Item> batch;
        synchronized (this) {
            if (closed || inflight || unsent.isEmpty()) {
                return;
            }
            inflight = true;
            batch = new ArrayList<>(unsent.values());
        }
        long epoch = brokerEpoch.getAsLong();
        AlterPartitionRequestData request = buildRequest(batch, epoch);
        LOGGER.debug("Sending AlterPartition to controller {}", request);
        CompletableFuture<AlterPartitionResponseData> response;
        try {
            response = controller.apply(request);
        } catch (RuntimeException e) {
            response = CompletableFuture.failedFuture(e);
        }
        response.whenComplete((answer, failure) -> scheduler.execute(() -> onResponse(batch, epoch, answer,
            failure)));
    }

    private AlterPartitionRequestData buildRequest(List<Item> batch, long epoch) {
        Map<Uuid, AlterPartitionRequestData.TopicData> topics = new LinkedHashMap<>();
        for (Item item : batch) {
            AlterPartitionRequestData.TopicData topic = topics.computeIfAbsent(item.topicId(),
                id -> new AlterPartitionRequestData.TopicData().setTopicId(id));
            List<AlterPartitionRequestData.BrokerState> isr = new ArrayList<>();
            item.proposal().isrWithEpochs().forEach(m -> isr.add(new AlterPartitionRequestData.BrokerState()
                .setBrokerId(m.brokerId()).setBrokerEpoch(m.brokerEpoch())));
            topic.partitions().add(new AlterPartitionRequestData.PartitionData()
                .setPartitionIndex(item.topicPartition().partition()).setLeaderEpoch(item.proposal().leaderEpoch())
                .setPartitionEpoch(item.proposal().partitionEpoch()).setNewIsrWithEpochs(isr));
        }
        return new AlterPartitionRequestData().setBrokerId(brokerId).setBrokerEpoch(epoch)
            .setTopics(new ArrayList<>(topics.values()));
    }

    private void onResponse(List<Item> batch, long sentEpoch, AlterPartitionResponseData answer,
                            Throwable failure) {
        Errors error;
        try {
            error = failure != null ? Errors.forException(failure) : handleResponse(batch, sentEpoch, answer);
            if (failure != null) {
                LOGGER.warn("AlterPartition request to the controller failed ({}); retrying in {} ms", error,
                    RETRY_BACKOFF_MS);
            }
        } finally {
            synchronized (this) {
                inflight = false;
            }
        }
        if (error == Errors.NONE) {
            maybePropagateIsrChanges();
        } else {
            scheduler.schedule(this::maybePropagateIsrChanges, RETRY_BACKOFF_MS);
        }
    }

    private Errors handleResponse(List<Item> batch, long sentEpoch, AlterPartitionResponseData answer) {
        Errors topLevel = Errors.forCode(answer.errorCode());
        if (topLevel == Errors.STALE_BROKER_EPOCH) {
            LOGGER.warn("Broker had a stale broker epoch ({}), retrying.", sentEpoch);
            return topLevel;
        }
        if (topLevel != Errors.NONE) {
            LOGGER.warn("Controller returned an unexpected top-level error when handling AlterPartition request: {}",
                topLevel);
            return topLevel;
        }
        Map<Uuid, Map<Integer, AlterPartitionResponseData.PartitionData>> results = new HashMap<>();
        for (AlterPartitionResponseData.TopicData topic : answer.topics()) {
            for (AlterPartitionResponseData.PartitionData partition : topic.partitions()) {
                results.computeIfAbsent(topic.topicId(), id -> new HashMap<>()).put(partition.partitionIndex(),
                    partition);
            }
        }
        for (Item item : batch) {
            AlterPartitionResponseData.PartitionData result = results.getOrDefault(item.topicId(), Map.of())
                .get(item.topicPartition().partition());
            if (result == null) {
                LOGGER.warn("Partition {} was sent but not included in the response", item.topicPartition());
                continue;
            }
            synchronized (this) {
                unsent.remove(item.topicPartition(), item);
            }
            Errors error = Errors.forCode(result.errorCode());
            LOGGER.debug("Controller successfully handled AlterPartition request for {}: {}", item.topicPartition(),
                result);
            if (error == Errors.NONE) {
                item.future().complete(LeaderAndIsr.of(result.leaderId(), result.leaderEpoch(), result.isr(),
                    result.partitionEpoch()));
            } else {
                item.future().completeExceptionally(error.exception());
            }
        }
        return Errors.NONE;
    }

    /** Proposals queued or in flight (for tests and metrics). */
    public synchronized int pendingCount() {
        return unsent.size();
    }

    /** Stops sending; queued proposals are dropped unanswered (their partitions are closing too). */
    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            unsent.clear();
        }
        scheduler.shutdown();
    }
}
