package io.cairn.isr;

import io.cairn.log.Time;
import io.cairn.metadata.image.BrokerRegistration;
import io.cairn.wire.message.AlterPartitionRequestData;
import io.cairn.wire.message.AlterPartitionResponseData;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A hand-driven world for a leader's ISR changes: a clock that moves only when told, the brokers of the metadata
 * image, a controller channel that records each AlterPartition and answers only when the test says, and the
 * {@link AlterPartitionManager}'s scheduler run by hand. Single-threaded.
 */
final class IsrHarness {

    /** A clock that moves only when told. */
    static final class ManualTime implements Time {
        private final AtomicLong nowMs = new AtomicLong(1_000_000L);

        @Override
        public long milliseconds() {
            return nowMs.get();
        }

        @Override
        public long nanoseconds() {
            return nowMs.get() * 1_000_000L;
        }

        @Override
        public void sleep(long ms) {
            nowMs.addAndGet(ms);
        }
    }

    /** The manager's tasks, run when the test calls {@link #runPending} or {@link #advance}. */
    static final class ManualScheduler implements AlterPartitionManager.Scheduler {
        private final ManualTime time;
        private final Deque<Runnable> ready = new ArrayDeque<>();
        private final List<Map.Entry<Long, Runnable>> delayed = new ArrayList<>();

        ManualScheduler(ManualTime time) {
            this.time = time;
        }

        @Override
        public void execute(Runnable task) {
            ready.add(task);
        }

        @Override
        public void schedule(Runnable task, long delayMs) {
            delayed.add(Map.entry(time.milliseconds() + delayMs, task));
        }

        @Override
        public void shutdown() {
            ready.clear();
            delayed.clear();
        }

        void runPending() {
            while (!ready.isEmpty()) {
                ready.poll().run();
            }
        }

        /** Moves the clock and runs what became due. */
        void advance(long ms) {
            time.sleep(ms);
            List<Map.Entry<Long, Runnable>> due = new ArrayList<>();
            delayed.removeIf(e -> e.getKey() <= time.milliseconds() && due.add(e));
            due.forEach(e -> ready.add(e.getValue()));
            runPending();
        }
    }

    final ManualTime time = new ManualTime();
    final ManualScheduler scheduler = new ManualScheduler(time);
    final Map<Integer, BrokerRegistration> brokers = new HashMap<>();
    final Deque<Map.Entry<AlterPartitionRequestData, CompletableFuture<AlterPartitionResponseData>>> sent =
        new ArrayDeque<>();
    final AlterPartitionManager manager;
    final IsrContext context;

    IsrHarness(int localBrokerId, long replicaLagTimeMaxMs, int... brokerIds) {
        for (int id : brokerIds) {
            register(id, 10L + id);
        }
        manager = new AlterPartitionManager(localBrokerId, () -> epochOf(localBrokerId), request -> {
            CompletableFuture<AlterPartitionResponseData> answer = new CompletableFuture<>();
            sent.add(Map.entry(request, answer));
            return answer;
        }, scheduler);
        context = new IsrContext(replicaLagTimeMaxMs, manager, id -> Optional.ofNullable(brokers.get(id)),
            () -> epochOf(localBrokerId));
    }

    /** A context for tests that do not look at ISR changes: no broker is eligible, nothing is ever answered. */
    static IsrContext quiet() {
        return new IsrHarness(-1, IsrContext.DEFAULT_REPLICA_LAG_TIME_MAX_MS).context;
    }

    void register(int id, long epoch) {
        brokers.put(id, new BrokerRegistration(id, new Uuid(id, id), epoch, List.of(), Optional.empty(), false,
            false));
    }

    long epochOf(int id) {
        BrokerRegistration b = brokers.get(id);
        return b == null ? -1L : b.epoch();
    }

    /** The next AlterPartition sent (after running the manager's pending work), or null. */
    Map.Entry<AlterPartitionRequestData, CompletableFuture<AlterPartitionResponseData>> nextSent() {
        scheduler.runPending();
        return sent.poll();
    }

    /** Answers {@code request} with the controller's per-partition {@code answer}, then runs the callbacks. */
    void answer(Map.Entry<AlterPartitionRequestData, CompletableFuture<AlterPartitionResponseData>> request,
                AlterPartitionResponseData.PartitionData answer) {
        AlterPartitionRequestData.TopicData topic = request.getKey().topics().get(0);
        AlterPartitionResponseData response = new AlterPartitionResponseData();
        response.topics().add(new AlterPartitionResponseData.TopicData().setTopicId(topic.topicId())
            .setPartitions(new ArrayList<>(List.of(answer.setPartitionIndex(topic.partitions().get(0)
                .partitionIndex())))));
        request.getValue().complete(response);
        scheduler.runPending();
    }

    /** The controller accepting the request's ISR for its single partition, in the next partition epoch. */
    void accept(Map.Entry<AlterPartitionRequestData, CompletableFuture<AlterPartitionResponseData>> request,
                int leader) {
        AlterPartitionRequestData.PartitionData p = request.getKey().topics().get(0).partitions().get(0);
        List<Integer> isr = new ArrayList<>();
        p.newIsrWithEpochs().forEach(b -> isr.add(b.brokerId()));
        answer(request, new AlterPartitionResponseData.PartitionData().setLeaderId(leader)
            .setLeaderEpoch(p.leaderEpoch()).setIsr(isr).setPartitionEpoch(p.partitionEpoch() + 1));
    }
}
