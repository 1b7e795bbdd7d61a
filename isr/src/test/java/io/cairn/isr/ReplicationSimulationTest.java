package io.cairn.isr;

import io.cairn.isr.fetcher.InitialFetchState;
import io.cairn.isr.fetcher.LeaderEndpoint;
import io.cairn.isr.fetcher.ReplicaFetcherThread;
import io.cairn.isr.client.SourceBroker;
import io.cairn.isr.fetcher.TestFetchers;
import io.cairn.log.AppendOrigin;
import io.cairn.log.FetchDataInfo;
import io.cairn.log.LogConfig;
import io.cairn.log.LogEnvironment;
import io.cairn.log.PartitionLog;
import io.cairn.log.TimestampAndOffset;
import io.cairn.metadata.controller.ControllerLogic;
import io.cairn.metadata.controller.ControllerResult;
import io.cairn.metadata.controller.ControllerSettings;
import io.cairn.metadata.image.MetadataDelta;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.ApiException;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AlterPartitionRequestData;
import io.cairn.wire.message.AlterPartitionResponseData;
import io.cairn.wire.message.BrokerHeartbeatRequestData;
import io.cairn.wire.message.BrokerRegistrationRequestData;
import io.cairn.wire.message.BrokerRegistrationResponseData;
import io.cairn.wire.message.CreateTopicsRequestData;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.Uuid;
import io.cairn.wire.record.CompressionType;
import io.cairn.wire.record.RecordBatch;
import io.cairn.wire.record.RecordBatchBuilder;
import io.cairn.wire.record.RecordBatches;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A seeded, single-threaded simulation of a 3-broker partition (RF 3) over the real replication code: each broker
 * has its own {@link Partition} on a real {@link PartitionLog}, its own {@link AlterPartitionManager} and a
 * {@link ReplicaFetcherThread} driven one round at a time through an in-memory {@link LeaderEndpoint}; the
 * controller is the real {@link ControllerLogic}, whose metadata each broker receives late, in order. Steps chosen by
 * the seed: produce (acks=1 and acks=all) to any broker that thinks it leads (a deposed leader too), a fetch round of
 * a follower (request or response possibly lost), AlterPartition answered or lost, metadata delivered, brokers
 * fenced and unfenced (leader changes), the ISR expiration task, fsyncs, high-watermark checkpoints, a network
 * partition of one broker (from brokers and controller) and its heal, and hard restarts: the log is closed without
 * flushing and truncated to its flushed offset on reopening (what a power cut leaves), the broker re-registers with
 * a new incarnation and restores its checkpointed high watermark.
 *
 * <p>After every step: a leader's high watermark never goes back within its leader epoch; the batches below any
 * leader's high watermark agree with every batch any leader ever exposed below its high watermark (the committed
 * prefix, which covers every acks=all acknowledgement); every member of the controller's ISR holds the whole
 * committed prefix, so any leader elected from it does. After a final convergence phase (heal, unfence, nothing
 * lost) every replica is in the ISR, the high watermark is the log end and all logs are byte for byte identical.
 *
 * <p>Without eligible leader replicas (KIP-966) a broker that loses unflushed data while it is the last ISR member
 * is elected again with a shorter log (Kafka before 4.0 loses acknowledged data that way too), so a hard restart
 * is chosen only for a broker that is not the controller's sole ISR member.
 */
class ReplicationSimulationTest {

    private static final int BROKERS = 3;
    private static final long LAG_MS = 10_000L;
    private static final long BACKOFF_MS = 100L;
    private static final int STEPS = 1000;
    private static final TopicPartition TP = new TopicPartition("sim", 0);

    @TempDir
    Path dir;

    private final IsrHarness.ManualTime time = new IsrHarness.ManualTime();
    private final ControllerLogic logic = new ControllerLogic(ControllerSettings.defaults(0));
    private final Node[] nodes = new Node[BROKERS + 1];
    private final Set<Integer> isolated = new HashSet<>();
    private final Deque<String> trace = new ArrayDeque<>();
    /** Every batch ever exposed below a leader's high watermark: base offset to checksum. */
    private final TreeMap<Long, Long> committed = new TreeMap<>();
    private final LogConfig config = LogConfig.builder().segmentBytes(4096).build();
    private MetadataImage controllerImage = MetadataImage.EMPTY;
    private Uuid topicId;
    private Random random;
    private long seed;
    private int minIsr;
    /** {@code replica.fetch.max.bytes}: per seed about two batches (catching up takes many rounds) or 1 MiB. */
    private int fetchMaxBytes;
    private long committedEnd;
    private int incarnations;
    private int produced;
    private int restarts;
    private long lostOffsets;
    private int fetchRounds;
    /** How the network treats the fetch round being run: 0 delivers, 1 loses the request, 2 the response. */
    private int drop;

    @AfterEach
    void closeLogs() {
        for (Node node : nodes) {
            if (node != null) {
                node.log.closeWithoutFlush();
            }
        }
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 42, 1234, 20261201})
    void replicasNeverLoseWhatAHighWatermarkExposedAndConvergeToIdenticalLogs(long seed) {
        this.seed = seed;
        random = new Random(seed);
        minIsr = 1 + random.nextInt(BROKERS);
        fetchMaxBytes = random.nextBoolean() ? 200 : 1 << 20;
        setUp();
        for (int step = 0; step < STEPS; step++) {
            step();
            checkInvariants("step " + step);
        }
        converge();
        checkConverged();
        System.out.printf("seed %d: min.insync.replicas %d, leader epoch %d, committed %d, log end %d, "
            + "%d hard restart(s) losing %d offset(s), %d fetch round(s), %d produce(s)%n", seed, minIsr,
            controllerPartition().leaderEpoch(), committedEnd, nodes[1].log.logEndOffset(), restarts, lostOffsets,
            fetchRounds, produced);
    }

    // ----- the world ---------------------------------------------------------------------------------------------

    /** One broker: its metadata (late), its partition and log, its AlterPartition channel and its fetcher. */
    private final class Node {
        final int id;
        final Deque<MetadataImage> undelivered = new ArrayDeque<>();
        final Deque<Map.Entry<AlterPartitionRequestData, CompletableFuture<AlterPartitionResponseData>>> requests =
            new ArrayDeque<>();
        final Set<TopicPartition> failed = ConcurrentHashMap.newKeySet();
        long brokerEpoch;
        MetadataImage image;
        PartitionLog log;
        Partition partition;
        IsrHarness.ManualScheduler scheduler;
        AlterPartitionManager manager;
        ReplicaFetcherThread fetcher;
        Integer fetchedEpoch;
        long checkpointedHighWatermark;
        int ledEpoch = -1;
        long ledHighWatermark;

        Node(int id) {
            this.id = id;
        }

        Path logDir() {
            return dir.resolve("broker-" + id).resolve("sim-0");
        }

        /** As the broker starts: the metadata caught up, the partition created, the checkpointed HW restored. */
        void start() {
            image = controllerImage;
            undelivered.clear();
            requests.clear();
            fetcher = null;
            fetchedEpoch = null;
            ledEpoch = -1;
            scheduler = new IsrHarness.ManualScheduler(time);
            manager = new AlterPartitionManager(id, () -> brokerEpoch, request -> {
                CompletableFuture<AlterPartitionResponseData> answer = new CompletableFuture<>();
                requests.add(Map.entry(request, answer));
                return answer;
            }, scheduler);
            IsrContext context = new IsrContext(LAG_MS, manager, b -> image.broker(b), () -> brokerEpoch);
            partition = new Partition(TP, topicId, id, log, image.partition(TP).orElseThrow(), minIsr, p -> { },
                time, context);
            partition.restoreHighWatermark(checkpointedHighWatermark);
            updateFetcher();
        }

        /** The replica manager's become-follower / become-leader for this partition ({@code updateFetcher}). */
        void updateFetcher() {
            PartitionRegistration reg = partition.registration();
            if (reg.leader() == id) {
                fetcher = null;
                fetchedEpoch = null;
                return;
            }
            if (fetchedEpoch != null && fetchedEpoch == reg.leaderEpoch()) {
                return;
            }
            fetchedEpoch = reg.leaderEpoch();
            fetcher = null;
            if (reg.leader() == PartitionRegistration.NO_LEADER) {
                return;
            }
            SourceBroker source = new SourceBroker(reg.leader(), "broker-" + reg.leader(), 9092);
            fetcher = new ReplicaFetcherThread("ReplicaFetcherThread-0-" + reg.leader(),
                new SimEndpoint(id, source), tp -> partition, failed, time, BACKOFF_MS, fetchMaxBytes);
            long initOffset = log.latestEpoch() >= 0 ? partition.logEndOffset() : partition.highWatermark();
            fetcher.addPartitions(Map.of(TP, new InitialFetchState(topicId, source, reg.leaderEpoch(), initOffset)));
        }

        void deliverMetadata() {
            image = undelivered.poll();
            partition.update(image.partition(TP).orElseThrow());
            updateFetcher();
            scheduler.runPending();
        }
    }

    /** A follower's view of a leader through the simulated network; fails like a broken connection when cut. */
    private final class SimEndpoint implements LeaderEndpoint {
        private final int follower;
        private final SourceBroker source;

        SimEndpoint(int follower, SourceBroker source) {
            this.follower = follower;
            this.source = source;
        }

        private Partition leader() {
            if (!connected(follower, source.id()) || drop == 1) {
                throw new IllegalStateException("connection to broker " + source.id() + " lost");
            }
            return nodes[source.id()].partition;
        }

        private void maybeLoseResponse() {
            if (drop == 2) {
                throw new IllegalStateException("response from broker " + source.id() + " lost");
            }
        }

        @Override
        public SourceBroker sourceBroker() {
            return source;
        }

        @Override
        public Map<TopicPartition, FetchedPartition> fetch(Map<TopicPartition, PartitionFetchRequest> partitions) {
            Partition leader = leader();
            PartitionFetchRequest p = partitions.get(TP);
            LogReadRequest request = new LogReadRequest(follower, p.fetchOffset(), p.currentLeaderEpoch(),
                p.lastFetchedEpoch(), p.logStartOffset(), nodes[follower].brokerEpoch);
            FetchedPartition answer;
            try (LogReadResult read = leader.fetchRecords(request, FetchIsolation.LOG_END, p.maxBytes(), true, true)) {
                answer = new FetchedPartition(Errors.NONE, read.highWatermark(), read.logStartOffset(),
                    completeBatches(read.info()), read.divergingEpoch());
            } catch (ApiException e) {
                answer = new FetchedPartition(Errors.forException(e), -1L, -1L, ByteBuffer.allocate(0), null);
            }
            nodes[source.id()].scheduler.runPending();
            maybeLoseResponse();
            return Map.of(TP, answer);
        }

        /** The read's complete batches: a size limit may cut the last one, which the response then drops. */
        private static ByteBuffer completeBatches(FetchDataInfo info) {
            if (info.firstEntryIncomplete()) {
                return ByteBuffer.allocate(0);
            }
            ByteBuffer records = info.records().readBytes();
            int size = RecordBatches.of(Unpooled.wrappedBuffer(records.duplicate())).sizeOfCompleteBatches();
            return records.limit(records.position() + size).slice();
        }

        @Override
        public Map<TopicPartition, EpochEndOffsetResult> fetchEpochEndOffsets(
                Map<TopicPartition, EpochRequest> partitions) {
            Partition leader = leader();
            EpochRequest request = partitions.get(TP);
            EpochEndOffsetResult result;
            try {
                EpochEndOffset end = leader.lastOffsetForLeaderEpoch(request.currentLeaderEpoch(),
                    request.leaderEpoch(), true);
                result = new EpochEndOffsetResult(Errors.NONE, end.leaderEpoch(), end.endOffset());
            } catch (ApiException e) {
                result = new EpochEndOffsetResult(Errors.forException(e), -1, -1L);
            }
            maybeLoseResponse();
            return Map.of(TP, result);
        }

        @Override
        public OffsetAndEpoch fetchEarliestOffset(TopicPartition tp, int currentLeaderEpoch) {
            return listOffset(currentLeaderEpoch, TimestampAndOffset.EARLIEST_TIMESTAMP);
        }

        @Override
        public OffsetAndEpoch fetchLatestOffset(TopicPartition tp, int currentLeaderEpoch) {
            return listOffset(currentLeaderEpoch, TimestampAndOffset.LATEST_TIMESTAMP);
        }

        private OffsetAndEpoch listOffset(int currentLeaderEpoch, long timestamp) {
            TimestampAndOffset found = leader().fetchOffsetForTimestamp(timestamp, null, currentLeaderEpoch)
                .orElseThrow();
            maybeLoseResponse();
            return new OffsetAndEpoch(found.offset(), found.leaderEpoch());
        }

        @Override
        public void initiateClose() {
        }

        @Override
        public void close() {
        }
    }

    private boolean connected(int a, int b) {
        return !isolated.contains(a) && !isolated.contains(b);
    }

    private void setUp() {
        CreateTopicsRequestData create = new CreateTopicsRequestData();
        CreateTopicsRequestData.CreatableTopic topic = new CreateTopicsRequestData.CreatableTopic().setName("sim")
            .setNumPartitions(-1).setReplicationFactor((short) -1);
        List<Integer> replicas = new ArrayList<>();
        for (int id = 1; id <= BROKERS; id++) {
            nodes[id] = new Node(id);
            nodes[id].brokerEpoch = register(id);
            commit(logic.heartbeat(controllerImage, heartbeat(id, nodes[id].brokerEpoch)));
            replicas.add(id);
        }
        topic.assignments().add(new CreateTopicsRequestData.CreatableReplicaAssignment().setPartitionIndex(0)
            .setBrokerIds(replicas));
        create.topics().add(topic);
        commit(logic.handle(controllerImage, create, b -> true));
        topicId = controllerImage.topic("sim").orElseThrow().id();
        for (int id = 1; id <= BROKERS; id++) {
            nodes[id].log = PartitionLog.open(nodes[id].logDir(), config, LogEnvironment.of(time), true);
            nodes[id].start();
        }
    }

    private long register(int id) {
        BrokerRegistrationResponseData registered = (BrokerRegistrationResponseData) commit(
            logic.registerBroker(controllerImage, new BrokerRegistrationRequestData().setBrokerId(id)
                .setIncarnationId(new Uuid(id, ++incarnations)), b -> false));
        return registered.brokerEpoch();
    }

    private static BrokerHeartbeatRequestData heartbeat(int id, long epoch) {
        return new BrokerHeartbeatRequestData().setBrokerId(id).setBrokerEpoch(epoch).setWantFence(false);
    }

    private ApiMessage commit(ControllerResult<? extends ApiMessage> result) {
        commitRecords(result.records());
        return result.response();
    }

    /** Commits records to the controller's image; every broker receives the new image later, in order. */
    private void commitRecords(List<ApiMessage> records) {
        if (records.isEmpty()) {
            return;
        }
        controllerImage = new MetadataDelta(controllerImage).replayAll(records).apply(controllerImage.offset() + 1);
        for (int id = 1; id <= BROKERS; id++) {
            if (nodes[id] != null) {
                nodes[id].undelivered.add(controllerImage);
            }
        }
    }

    private PartitionRegistration controllerPartition() {
        return controllerImage.partition(TP).orElseThrow();
    }

    // ----- steps -------------------------------------------------------------------------------------------------

    private void step() {
        int dice = random.nextInt(100);
        Node node = nodes[1 + random.nextInt(BROKERS)];
        if (dice < 20) {
            produce();
        } else if (dice < 50) {
            fetchRound(node, random.nextInt(8) == 0 ? 1 + random.nextInt(2) : 0);
        } else if (dice < 60) {
            answerAlterPartition(node, random.nextInt(8) == 0);
        } else if (dice < 72) {
            if (!node.undelivered.isEmpty() && !isolated.contains(node.id)) {
                log("metadata to " + node.id);
                node.deliverMetadata();
            }
        } else if (dice < 77) {
            toggleFence(node);
        } else if (dice < 82) {
            long ms = random.nextInt((int) LAG_MS);
            log("clock +" + ms + " and ISR expiration");
            tick(ms);
            for (int id = 1; id <= BROKERS; id++) {
                nodes[id].partition.maybeShrinkIsr();
                nodes[id].scheduler.runPending();
            }
        } else if (dice < 87) {
            log("flush " + node.id + " at " + node.log.logEndOffset());
            node.log.flush(node.log.logEndOffset());
        } else if (dice < 91) {
            log("checkpoint high watermarks");
            for (int id = 1; id <= BROKERS; id++) {
                nodes[id].checkpointedHighWatermark = nodes[id].partition.highWatermark();
            }
        } else if (dice < 95) {
            toggleIsolation(node);
        } else if (dice < 98) {
            hardRestart(node);
        } else {
            log("clock +" + BACKOFF_MS);
            tick(BACKOFF_MS);
        }
    }

    private void tick(long ms) {
        time.sleep(ms);
        for (int id = 1; id <= BROKERS; id++) {
            nodes[id].scheduler.advance(0);
        }
    }

    private void produce() {
        List<Node> leaders = new ArrayList<>();
        for (int id = 1; id <= BROKERS; id++) {
            if (nodes[id].partition.isLeader()) {
                leaders.add(nodes[id]);
            }
        }
        if (leaders.isEmpty()) {
            return;
        }
        Node leader = leaders.get(random.nextInt(leaders.size()));
        int acks = random.nextBoolean() ? -1 : 1;
        try {
            leader.partition.appendRecordsToLeader(batch(1 + random.nextInt(3)), AppendOrigin.CLIENT, acks);
            log("produce acks=" + acks + " to " + leader.id + " -> end " + leader.partition.logEndOffset());
        } catch (ApiException e) {
            log("produce acks=" + acks + " to " + leader.id + " failed: " + Errors.forException(e));
        }
        leader.scheduler.runPending();
    }

    private void fetchRound(Node node, int dropMode) {
        if (node.fetcher == null) {
            return;
        }
        drop = dropMode;
        fetchRounds++;
        try {
            TestFetchers.round(node.fetcher);
        } finally {
            drop = 0;
        }
        node.scheduler.runPending();
        log("fetch round of " + node.id + " from " + node.fetcher.sourceBroker().id()
            + (dropMode == 1 ? " (request lost)" : dropMode == 2 ? " (response lost)" : "") + " -> end "
            + node.partition.logEndOffset() + " hw " + node.partition.highWatermark());
    }

    private void answerAlterPartition(Node node, boolean lost) {
        Map.Entry<AlterPartitionRequestData, CompletableFuture<AlterPartitionResponseData>> request =
            node.requests.poll();
        if (request == null) {
            return;
        }
        if (lost || isolated.contains(node.id)) {
            log("AlterPartition of " + node.id + " lost");
            request.getValue().completeExceptionally(Errors.NOT_CONTROLLER.exception());
        } else {
            AlterPartitionResponseData response = (AlterPartitionResponseData) commit(logic.handle(controllerImage,
                request.getKey(), b -> true));
            log("AlterPartition of " + node.id + " " + request.getKey().topics().get(0).partitions().get(0)
                .newIsrWithEpochs().stream().map(b -> b.brokerId()).toList() + " -> " + response);
            request.getValue().complete(response);
        }
        node.scheduler.runPending();
    }

    private void toggleFence(Node node) {
        if (controllerImage.broker(node.id).orElseThrow().fenced()) {
            if (!isolated.contains(node.id)) {
                commit(logic.heartbeat(controllerImage, heartbeat(node.id, node.brokerEpoch)));
                log("unfence " + node.id + " -> " + controllerPartition());
            }
        } else {
            commitRecords(logic.fenceExpired(controllerImage, node.id));
            log("fence " + node.id + " -> " + controllerPartition());
        }
    }

    private void toggleIsolation(Node node) {
        if (isolated.isEmpty()) {
            isolated.add(node.id);
            log("isolate " + node.id);
        } else {
            isolated.clear();
            log("heal the network");
        }
    }

    /**
     * A power cut and restart: what was not flushed is gone (the reopened log is truncated to the flushed offset),
     * the broker registers a new incarnation (fenced; the controller takes it out of the ISR) and starts from the
     * current metadata with its checkpointed high watermark.
     */
    private void hardRestart(Node node) {
        if (controllerPartition().isr().equals(List.of(node.id))) {
            return;
        }
        long flushed = node.log.flushedOffset();
        long end = node.log.logEndOffset();
        node.log.closeWithoutFlush();
        node.manager.close();
        node.log = PartitionLog.open(node.logDir(), config, LogEnvironment.of(time), false);
        if (node.log.logEndOffset() > flushed) {
            node.log.truncateTo(flushed);
        }
        node.brokerEpoch = register(node.id);
        node.start();
        restarts++;
        lostOffsets += end - node.log.logEndOffset();
        log("hard restart of " + node.id + ": end " + end + " -> " + node.log.logEndOffset() + ", flushed "
            + flushed + " -> " + controllerPartition());
    }

    // ----- invariants --------------------------------------------------------------------------------------------

    private void checkInvariants(String at) {
        for (int id = 1; id <= BROKERS; id++) {
            Node node = nodes[id];
            Partition p = node.partition;
            if (!p.isLeader()) {
                node.ledEpoch = -1;
                continue;
            }
            long hw = p.highWatermark();
            if (node.ledEpoch == p.leaderEpoch()) {
                check(hw >= node.ledHighWatermark, at, "leader " + id + " moved its HW back from "
                    + node.ledHighWatermark + " to " + hw);
            }
            node.ledEpoch = p.leaderEpoch();
            node.ledHighWatermark = hw;
            Map<Long, Long> exposed = batchesBelow(node.log, hw);
            for (Map.Entry<Long, Long> e : exposed.entrySet()) {
                Long known = committed.putIfAbsent(e.getKey(), e.getValue());
                check(known == null || known.equals(e.getValue()), at, "leader " + id + " exposes batch "
                    + e.getKey() + " below its HW " + hw + " that differs from the one exposed before");
            }
            committedEnd = Math.max(committedEnd, hw);
        }
        for (int member : controllerPartition().isr()) {
            Map<Long, Long> held = batchesBelow(nodes[member].log, committedEnd);
            check(nodes[member].log.logEndOffset() >= committedEnd && held.equals(committed.headMap(committedEnd)), at,
                "ISR member " + member + " (log end " + nodes[member].log.logEndOffset() + ") lacks or differs in "
                    + "the committed prefix below " + committedEnd);
        }
    }

    /** The batches of {@code log} below {@code end}: base offset to checksum. */
    private static Map<Long, Long> batchesBelow(PartitionLog log, long end) {
        Map<Long, Long> batches = new LinkedHashMap<>();
        ByteBuffer all = allBytes(log);
        for (int at = all.position(); at < all.limit(); ) {
            RecordBatch batch = RecordBatch.of(all, at);
            if (batch.baseOffset() >= end) {
                break;
            }
            batches.put(batch.baseOffset(), batch.checksum());
            at += batch.sizeInBytes();
        }
        return batches;
    }

    private static ByteBuffer allBytes(PartitionLog log) {
        try (FetchDataInfo info = log.read(log.logStartOffset(), Integer.MAX_VALUE, Long.MAX_VALUE, true)) {
            return info.records().readBytes();
        }
    }

    private void check(boolean condition, String at, String what) {
        if (!condition) {
            throw new AssertionError("seed " + seed + " (min.insync.replicas " + minIsr + ") " + at + ": " + what
                + "\ncontroller: " + controllerPartition() + "\n" + describeNodes() + "\nlast steps:\n"
                + String.join("\n", trace));
        }
    }

    private String describeNodes() {
        StringBuilder out = new StringBuilder();
        for (int id = 1; id <= BROKERS; id++) {
            Partition p = nodes[id].partition;
            out.append("broker ").append(id).append(": ").append(p).append(" end ").append(p.logEndOffset())
                .append(" epochs ").append(nodes[id].log.epochEntries()).append(" pending metadata ")
                .append(nodes[id].undelivered.size()).append('\n');
        }
        return out.toString();
    }

    private void log(String event) {
        trace.add(time.milliseconds() + " " + event);
        if (trace.size() > 60) {
            trace.poll();
        }
    }

    // ----- convergence -------------------------------------------------------------------------------------------

    /** Stops the chaos: the network healed, every broker unfenced, nothing lost, rounds until nothing changes. */
    private void converge() {
        isolated.clear();
        log("converge");
        for (int round = 0; round < 5_000 && !converged(); round++) {
            for (int id = 1; id <= BROKERS; id++) {
                Node node = nodes[id];
                if (controllerImage.broker(id).orElseThrow().fenced()) {
                    commit(logic.heartbeat(controllerImage, heartbeat(id, node.brokerEpoch)));
                }
            }
            for (int id = 1; id <= BROKERS; id++) {
                Node node = nodes[id];
                while (!node.undelivered.isEmpty()) {
                    node.deliverMetadata();
                }
                while (!node.requests.isEmpty()) {
                    answerAlterPartition(node, false);
                }
                if (node.fetcher != null) {
                    fetchRound(node, 0);
                }
            }
            tick(BACKOFF_MS);
            checkInvariants("convergence round " + round);
        }
    }

    private boolean converged() {
        PartitionRegistration reg = controllerPartition();
        if (reg.leader() == PartitionRegistration.NO_LEADER || reg.isr().size() < BROKERS) {
            return false;
        }
        Partition leader = nodes[reg.leader()].partition;
        for (int id = 1; id <= BROKERS; id++) {
            Partition p = nodes[id].partition;
            if (!nodes[id].undelivered.isEmpty() || p.logEndOffset() != leader.logEndOffset()
                    || p.highWatermark() != leader.logEndOffset()) {
                return false;
            }
        }
        return true;
    }

    private void checkConverged() {
        PartitionRegistration reg = controllerPartition();
        String at = "after convergence";
        check(reg.leader() != PartitionRegistration.NO_LEADER, at, "no leader");
        check(reg.isr().size() == BROKERS, at, "not every replica is back in the ISR");
        Partition leader = nodes[reg.leader()].partition;
        check(leader.isLeader() && leader.highWatermark() == leader.logEndOffset(), at,
            "the leader's HW is not its log end");
        check(leader.highWatermark() >= committedEnd, at, "the HW is below what was once exposed");
        ByteBuffer expected = allBytes(nodes[reg.leader()].log);
        for (int id = 1; id <= BROKERS; id++) {
            check(allBytes(nodes[id].log).equals(expected), at, "broker " + id + "'s log differs from the leader's");
            check(nodes[id].partition.highWatermark() == leader.highWatermark(), at,
                "broker " + id + " has not learnt the HW");
        }
    }

    private ByteBuffer batch(int records) {
        RecordBatchBuilder builder = new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, CompressionType.NONE);
        for (int i = 0; i < records; i++) {
            produced++;
            builder.append(time.milliseconds(), ("k" + produced).getBytes(), ("v" + produced).getBytes());
        }
        ByteBuf buf = builder.build();
        try {
            ByteBuffer copy = ByteBuffer.allocate(buf.readableBytes());
            buf.getBytes(buf.readerIndex(), copy);
            return copy.flip();
        } finally {
            buf.release();
        }
    }
}
