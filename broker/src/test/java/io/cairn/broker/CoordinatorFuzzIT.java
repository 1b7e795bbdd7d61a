package io.cairn.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.LeakDetection;
import io.cairn.wire.message.RandomRequests;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.AddOffsetsToTxnRequestData;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTopicCollection;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatRequestData;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatResponseData;
import org.apache.kafka.common.message.DeleteGroupsRequestData;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.DescribeTransactionsRequestData;
import org.apache.kafka.common.message.EndTxnRequestData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupRequestData.JoinGroupRequestProtocol;
import org.apache.kafka.common.message.JoinGroupRequestData.JoinGroupRequestProtocolCollection;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.message.ListTransactionsRequestData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.RequestUtils;
import org.apache.kafka.common.requests.ResponseHeader;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The group and transaction coordinators driven by random but plausible request sequences from four raw clients at
 * once: joins, syncs, heartbeats, leaves and commits of two classic groups, KIP-848 heartbeats of a consumer-protocol
 * group, and InitProducerId, AddPartitionsToTxn, transactional produce, AddOffsetsToTxn, TxnOffsetCommit and EndTxn of
 * two transactional ids, each built from what earlier responses said (member ids, generations, epochs, producer ids
 * and sequences) and sometimes from stale or made-up values, at a random version each. Every request is answered in
 * time with a response kafka-clients parses and no {@code UNKNOWN_SERVER_ERROR}; nothing is logged at ERROR. Then the
 * state the fuzzers left must not stand in a stock client's way: a transactional producer per id initialises, commits
 * and leaves the last stable offset at the high watermark (no transaction left hanging), and stock consumers join
 * both groups and read the topic. {@code -Dcairn.fuzz.seed} repeats a run, {@code -Dcairn.fuzz.ops} sets the
 * requests per client (default 300). Midway the broker restarts ({@code -Dcairn.fuzz.restarts}, default 1), so that
 * the coordinators load whatever state the fuzzers left them in, transactions mid-commit included.
 */
@ExtendWith(LeakDetection.class)
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class CoordinatorFuzzIT {

    private static final String TOPIC = "topic-1";
    private static final int PARTITIONS = 3;
    private static final List<String> GROUPS = List.of("g1", "g2");
    private static final String CONSUMER_GROUP = "c1";
    private static final List<String> TXN_IDS = List.of("t1", "t2");
    private static final int CLIENTS = 4;
    private static final int OPS = Integer.getInteger("cairn.fuzz.ops", 300);
    private static final int RESTARTS_PER_RUN = Integer.getInteger("cairn.fuzz.restarts", 1);
    private static final int ANSWER_MS = 20_000;

    @TempDir
    static Path dataDir;

    private static LogCapture logs;
    private static volatile InProcessBroker broker;
    /** Restarts begun; a connection opened before one may fail without that being the broker's fault. */
    private static final java.util.concurrent.atomic.AtomicInteger RESTARTS_BEGUN =
            new java.util.concurrent.atomic.AtomicInteger();
    /** Restarts done: while it is behind the count of those begun, the broker is closing or starting. */
    private static final java.util.concurrent.atomic.AtomicInteger RESTARTS_DONE =
            new java.util.concurrent.atomic.AtomicInteger();
    private static final Map<String, String> CONFIG = new HashMap<>();
    private static Admin admin;
    private static Uuid topicId;
    private static Map<Integer, short[]> versions;

    @BeforeAll
    static void startBroker() throws Exception {
        logs = LogCapture.start();
        Map<String, String> config = CONFIG;
        config.put("offsets.topic.replication.factor", "1");
        config.put("offsets.topic.num.partitions", "3");
        config.put("transaction.state.log.replication.factor", "1");
        config.put("transaction.state.log.min.isr", "1");
        config.put("transaction.state.log.num.partitions", "3");
        config.put("transaction.abort.timed.out.transaction.cleanup.interval.ms", "1000");
        config.put("group.initial.rebalance.delay.ms", "0");
        config.put("group.min.session.timeout.ms", "1000");
        config.put("group.consumer.min.session.timeout.ms", "1000");
        config.put("group.consumer.session.timeout.ms", "3000");
        config.put("group.consumer.min.heartbeat.interval.ms", "500");
        config.put("group.consumer.heartbeat.interval.ms", "1000");
        broker = InProcessBroker.start(dataDir, config);
        admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap()));
        admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1))).all().get(30, TimeUnit.SECONDS);
        broker.awaitHosted(TOPIC, PARTITIONS);
        topicId = admin.describeTopics(List.of(TOPIC)).allTopicNames().get(30, TimeUnit.SECONDS).get(TOPIC)
                .topicId();
        versions = new HashMap<>();
        try (RawConnection raw = broker.connect()) {
            raw.sendFrame(KafkaWire.apiVersionsRequest((short) 3, 0));
            KafkaWire.apiVersionsResponse(raw.readFrame(), (short) 3).body().apiKeys().forEach(api -> versions
                    .put((int) api.apiKey(), new short[] {api.minVersion(), api.maxVersion()}));
            awaitCoordinators(raw, (byte) 0, List.of("g1", "g2", CONSUMER_GROUP));
            awaitCoordinators(raw, (byte) 1, TXN_IDS);
        }
    }

    /** FindCoordinator until every key has its coordinator loaded (the first call creates the internal topic). */
    private static void awaitCoordinators(RawConnection raw, byte keyType, List<String> keys) {
        await("coordinators of " + keys).atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                .until(() -> {
                    FindCoordinatorRequestData find = new FindCoordinatorRequestData().setKeyType(keyType)
                            .setCoordinatorKeys(new ArrayList<>(keys));
                    RequestHeader header = new RequestHeader(ApiKeys.FIND_COORDINATOR, (short) 4, "warm-up", 1);
                    raw.sendFrame(RequestUtils.serialize(header.data(), header.headerVersion(), find, (short) 4));
                    ByteBuffer frame = raw.readFrame();
                    ResponseHeader.parse(frame, ApiKeys.FIND_COORDINATOR.responseHeaderVersion((short) 4));
                    FindCoordinatorResponseData found = new FindCoordinatorResponseData(new ByteBufferAccessor(frame),
                            (short) 4);
                    return found.coordinators().stream().allMatch(c -> c.errorCode() == Errors.NONE.code());
                });
    }

    @AfterAll
    static void stopBroker() {
        if (admin != null) {
            admin.close();
        }
        if (broker != null) {
            broker.close();
        }
        if (logs != null) {
            logs.close();
        }
    }

    private static String bootstrap() {
        return "127.0.0.1:" + broker.port();
    }

    @Test
    void coordinatorsAnswerEveryInterleavingAndLeaveNothingThatBlocksAStockClient() throws Exception {
        // Given
        long seed = Long.getLong("cairn.fuzz.seed", System.nanoTime());
        State state = new State();
        Map<String, Integer> outcomes = new ConcurrentHashMap<>();
        List<String> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(CLIENTS + 1);

        // When
        List<Future<?>> clients = new ArrayList<>();
        for (int c = 0; c < CLIENTS; c++) {
            Client client = new Client(new Random(seed + c), state, outcomes, failures);
            clients.add(pool.submit(() -> {
                client.run();
                return null;
            }));
        }
        Random restartRandom = new Random(seed);
        Future<?> restarter = pool.submit(() -> {
            for (int r = 0; r < RESTARTS_PER_RUN; r++) {
                Thread.sleep(500 + restartRandom.nextInt(2_000));
                // The coordinators must load what they wrote: groups, offsets, transactions mid-flight.
                RESTARTS_BEGUN.incrementAndGet();
                broker.close();
                broker = InProcessBroker.start(dataDir, CONFIG);
                RESTARTS_DONE.incrementAndGet();
            }
            return null;
        });
        try {
            for (Future<?> client : clients) {
                client.get(4, TimeUnit.MINUTES);
            }
            restarter.get(2, TimeUnit.MINUTES);
        } finally {
            pool.shutdownNow();
        }
        System.out.println("Coordinator fuzz, seed " + seed + ": " + new TreeMap<>(outcomes));

        // Then
        assertThat(failures).as("seed %d", seed).isEmpty();
        admin.close();
        admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap())); // the new port
        for (String txnId : TXN_IDS) {
            commitWithAStockProducer(txnId);
        }
        assertNoTransactionHangs();
        for (String group : GROUPS) {
            assertThat(consumeWithAStockConsumer(group, "classic")).as("group %s, seed %d", group, seed).isPositive();
        }
        assertThat(consumeWithAStockConsumer(CONSUMER_GROUP, "consumer")).as("seed %d", seed).isPositive();
        // Kafka's coordinator logs a rebalance that times out with no member back at ERROR too.
        assertThat(logs.messages(Level.ERROR, m -> !m.contains("could not complete its rebalance because no member")))
                .as("seed %d", seed).isEmpty();
        assertThat(logs.stackTracesAtWarnOrAbove()).as("seed %d", seed).isEmpty();
    }

    /** A stock transactional producer takes the id over (fencing whatever the fuzzers left) and commits. */
    private static void commitWithAStockProducer(String txnId) {
        Map<String, Object> config = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(),
                ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId, ProducerConfig.MAX_BLOCK_MS_CONFIG, 60_000);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(config, new StringSerializer(),
                new StringSerializer())) {
            producer.initTransactions();
            producer.beginTransaction();
            for (int p = 0; p < PARTITIONS; p++) {
                producer.send(new ProducerRecord<>(TOPIC, p, "k", "committed by " + txnId));
            }
            producer.commitTransaction();
        }
    }

    /** Every partition's last stable offset reaches its high watermark: no transaction is left open. */
    private static void assertNoTransactionHangs() {
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            latest.put(new TopicPartition(TOPIC, p), OffsetSpec.latest());
        }
        await("last stable offsets at the high watermarks").atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
                    var committed = admin.listOffsets(latest, new org.apache.kafka.clients.admin.ListOffsetsOptions(
                            IsolationLevel.READ_COMMITTED)).all().get(10, TimeUnit.SECONDS);
                    var uncommitted = admin.listOffsets(latest).all().get(10, TimeUnit.SECONDS);
                    for (TopicPartition tp : latest.keySet()) {
                        assertThat(committed.get(tp).offset()).as("%s", tp).isEqualTo(uncommitted.get(tp).offset());
                    }
                });
    }

    /** Records a stock consumer of {@code group} reads (read_committed) once it has joined. */
    private static int consumeWithAStockConsumer(String group, String protocol) {
        Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(),
                ConsumerConfig.GROUP_ID_CONFIG, group, ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest", ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                "read_committed");
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config, new StringDeserializer(),
                new StringDeserializer())) {
            consumer.subscribe(List.of(TOPIC));
            int read = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (read == 0 && System.nanoTime() < deadline) {
                read += consumer.poll(Duration.ofMillis(500)).count();
            }
            if (read > 0) {
                consumer.commitSync(Duration.ofSeconds(30));
            }
            return read;
        }
    }

    /** What the fuzzers learned from the coordinators' answers, shared by all of them. */
    private static final class State {
        final Map<String, List<String>> members = new ConcurrentHashMap<>();
        final Map<String, Integer> generations = new ConcurrentHashMap<>();
        final Map<String, String> consumerMember = new ConcurrentHashMap<>();
        final Map<String, Integer> consumerEpoch = new ConcurrentHashMap<>();
        final Map<String, long[]> producers = new ConcurrentHashMap<>();
        final Map<String, Integer> sequences = new ConcurrentHashMap<>();

        synchronized void member(String group, String memberId) {
            List<String> known = members.computeIfAbsent(group, g -> new ArrayList<>());
            if (!memberId.isEmpty() && !known.contains(memberId)) {
                known.add(memberId);
                if (known.size() > 6) {
                    known.remove(0);
                }
            }
        }

        synchronized String anyMember(String group, Random random) {
            List<String> known = members.getOrDefault(group, List.of());
            int pick = random.nextInt(known.size() + 2);
            return pick < known.size() ? known.get(pick) : pick == known.size() ? "" : "made-up-" + random.nextInt(3);
        }
    }

    /** One raw connection issuing random plausible coordinator requests one at a time. */
    private static final class Client {
        private final Random random;
        private final State state;
        private final Map<String, Integer> outcomes;
        private final List<String> failures;
        private int correlationId;

        Client(Random random, State state, Map<String, Integer> outcomes, List<String> failures) {
            this.random = random;
            this.state = state;
            this.outcomes = outcomes;
            this.failures = failures;
        }

        private int connectedAfter;

        void run() throws Exception {
            RawConnection raw = connect();
            try {
                for (int i = 0; i < OPS && failures.isEmpty(); i++) {
                    raw = step(raw);
                }
            } finally {
                raw.close();
            }
        }

        /** A connection to the broker of the moment, waiting out a restart. */
        private RawConnection connect() throws Exception {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (true) {
                int begun = RESTARTS_BEGUN.get();
                if (begun == RESTARTS_DONE.get()) {
                    try {
                        RawConnection raw = broker.connect();
                        connectedAfter = begun;
                        return raw;
                    } catch (IOException e) {
                        if (begun == RESTARTS_BEGUN.get() || System.nanoTime() > deadline) {
                            throw e;
                        }
                    }
                }
                Thread.sleep(50);
            }
        }

        private RawConnection step(RawConnection raw) throws Exception {
            String group = GROUPS.get(random.nextInt(GROUPS.size()));
            String txnId = TXN_IDS.get(random.nextInt(TXN_IDS.size()));
            long[] producer = state.producers.getOrDefault(txnId, new long[] {-1, -1});
            long producerId = random.nextInt(8) == 0 ? random.nextInt(3) : producer[0];
            short epoch = (short) (random.nextInt(8) == 0 ? producer[1] - 1 : producer[1]);
            String member = state.anyMember(group, random);
            int generation = random.nextInt(8) == 0 ? random.nextInt(4) - 1 : state.generations.getOrDefault(group, -1);
            Message body;
            switch (random.nextInt(17)) {
                case 0, 1 -> body = new JoinGroupRequestData().setGroupId(group).setMemberId(member)
                        .setSessionTimeoutMs(1_000 + random.nextInt(2_000)).setRebalanceTimeoutMs(500 + random.nextInt(
                                2_000)).setProtocolType("consumer").setGroupInstanceId(random.nextInt(5) == 0
                                ? "static-" + random.nextInt(2) : null).setProtocols(protocols());
                case 2 -> body = syncGroup(group, generation, member);
                case 3 -> body = new HeartbeatRequestData().setGroupId(group).setGenerationId(generation)
                        .setMemberId(member);
                case 4 -> body = random.nextBoolean()
                        ? new LeaveGroupRequestData().setGroupId(group).setMemberId(member)
                        : new LeaveGroupRequestData().setGroupId(group).setMembers(new ArrayList<>(List.of(
                                new LeaveGroupRequestData.MemberIdentity().setMemberId(member))));
                case 5 -> body = offsetCommit(group, generation, member);
                case 6 -> body = random.nextBoolean()
                        ? new OffsetFetchRequestData().setGroupId(group).setTopics(null)
                        : new OffsetFetchRequestData().setGroups(new ArrayList<>(List.of(
                                new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId(group).setTopics(null))));
                case 7 -> body = random.nextBoolean()
                        ? new DescribeGroupsRequestData().setGroups(new ArrayList<>(List.of(group, CONSUMER_GROUP)))
                        : random.nextBoolean() ? new ListGroupsRequestData()
                        : new DeleteGroupsRequestData().setGroupsNames(new ArrayList<>(List.of(group)));
                case 8, 9 -> body = consumerHeartbeat();
                case 10 -> body = new InitProducerIdRequestData().setTransactionalId(txnId)
                        .setTransactionTimeoutMs(1_000 + random.nextInt(4_000))
                        .setProducerId(random.nextBoolean() ? producer[0] : -1L)
                        .setProducerEpoch(random.nextBoolean() ? (short) producer[1] : -1);
                case 11 -> body = addPartitions(txnId, producerId, epoch);
                case 12, 13 -> body = produce(txnId, producerId, epoch);
                case 14 -> body = new AddOffsetsToTxnRequestData().setTransactionalId(txnId).setProducerId(producerId)
                        .setProducerEpoch(epoch).setGroupId(group);
                case 15 -> body = txnOffsetCommit(txnId, producerId, epoch, group, generation, member);
                default -> body = random.nextInt(3) == 0
                        ? (random.nextBoolean() ? new DescribeTransactionsRequestData().setTransactionalIds(
                                new ArrayList<>(TXN_IDS)) : new ListTransactionsRequestData())
                        : new EndTxnRequestData().setTransactionalId(txnId).setProducerId(producerId)
                                .setProducerEpoch(epoch).setCommitted(random.nextBoolean());
            }
            return exchange(raw, body);
        }

        private JoinGroupRequestProtocolCollection protocols() {
            JoinGroupRequestProtocolCollection protocols = new JoinGroupRequestProtocolCollection();
            // The stock consumer's first protocol: a member of another one alone would keep it out (rightly).
            protocols.add(new JoinGroupRequestProtocol().setName("range")
                    .setMetadata(new byte[] {0, 0, 0, 0, 0, 1, 0, 7, 't', 'o', 'p', 'i', 'c', '-', '1', -1, -1, -1,
                        -1}));
            return protocols;
        }

        private SyncGroupRequestData syncGroup(String group, int generation, String member) {
            List<SyncGroupRequestData.SyncGroupRequestAssignment> assignments = new ArrayList<>();
            if (random.nextBoolean()) {
                synchronized (state) {
                    for (String m : state.members.getOrDefault(group, List.of())) {
                        assignments.add(new SyncGroupRequestData.SyncGroupRequestAssignment().setMemberId(m)
                                .setAssignment(random.nextBoolean() ? new byte[0] : new byte[] {0, 0, 0, 0, 0, 0}));
                    }
                }
            }
            return new SyncGroupRequestData().setGroupId(group).setGenerationId(generation).setMemberId(member)
                    .setProtocolType("consumer").setProtocolName(random.nextBoolean() ? "range" : null)
                    .setAssignments(assignments);
        }

        private OffsetCommitRequestData offsetCommit(String group, int generation, String member) {
            // By name: v10, by id, is not advertised (unstable in Kafka 4.1); earlier versions drop an id unsaid.
            OffsetCommitRequestData.OffsetCommitRequestTopic topic = new OffsetCommitRequestData
                    .OffsetCommitRequestTopic().setName(TOPIC);
            topic.partitions().add(new OffsetCommitRequestData.OffsetCommitRequestPartition()
                    .setPartitionIndex(random.nextInt(PARTITIONS)).setCommittedOffset(random.nextInt(20)));
            boolean simple = random.nextInt(3) == 0;
            return new OffsetCommitRequestData().setGroupId(random.nextInt(4) == 0 ? CONSUMER_GROUP : group)
                    .setGenerationIdOrMemberEpoch(simple ? -1 : generation).setMemberId(simple ? "" : member)
                    .setTopics(new ArrayList<>(List.of(topic)));
        }

        private ConsumerGroupHeartbeatRequestData consumerHeartbeat() {
            String member = state.consumerMember.get(CONSUMER_GROUP);
            int epoch = state.consumerEpoch.getOrDefault(CONSUMER_GROUP, 0);
            int choice = random.nextInt(6);
            if (member == null || choice == 0) {
                member = Uuid.randomUuid().toString();
                epoch = 0;
            } else if (choice == 1) {
                epoch = -1; // leave
            } else if (choice == 2) {
                epoch += random.nextInt(3) - 1;
            }
            return new ConsumerGroupHeartbeatRequestData().setGroupId(CONSUMER_GROUP).setMemberId(member)
                    .setMemberEpoch(epoch).setRebalanceTimeoutMs(2_000).setSubscribedTopicNames(epoch == 0
                            ? new ArrayList<>(List.of(TOPIC)) : null).setTopicPartitions(epoch == 0
                            ? new ArrayList<>() : null).setServerAssignor(random.nextInt(4) == 0 ? "uniform" : null);
        }

        private AddPartitionsToTxnRequestData addPartitions(String txnId, long producerId, short epoch) {
            AddPartitionsToTxnTopicCollection topics = new AddPartitionsToTxnTopicCollection();
            List<Integer> partitions = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++) {
                if (random.nextBoolean()) {
                    partitions.add(p);
                }
            }
            topics.add(new AddPartitionsToTxnTopic().setName(TOPIC).setPartitions(partitions));
            return new AddPartitionsToTxnRequestData().setV3AndBelowTransactionalId(txnId)
                    .setV3AndBelowProducerId(producerId).setV3AndBelowProducerEpoch(epoch).setV3AndBelowTopics(topics);
        }

        private ProduceRequestData produce(String txnId, long producerId, short producerEpoch) {
            short epoch = producerId >= 0 && producerEpoch < 0 ? 0 : producerEpoch;
            int partition = random.nextInt(PARTITIONS);
            boolean transactional = random.nextInt(4) != 0;
            String key = producerId + "/" + partition;
            int sequence = state.sequences.getOrDefault(key, 0) + (random.nextInt(10) == 0 ? 1 : 0);
            MemoryRecords records = MemoryRecords.withRecords(RecordBatch.CURRENT_MAGIC_VALUE, 0L, Compression.NONE,
                    TimestampType.CREATE_TIME, producerId, epoch, producerId < 0 ? -1 : sequence,
                    RecordBatch.NO_PARTITION_LEADER_EPOCH, transactional && producerId >= 0,
                    new SimpleRecord(System.currentTimeMillis(), "k".getBytes(StandardCharsets.UTF_8),
                            ("fuzz " + key + " " + sequence).getBytes(StandardCharsets.UTF_8)));
            ProduceRequestData.TopicProduceData topic = random.nextBoolean()
                    ? new ProduceRequestData.TopicProduceData().setName(TOPIC)
                    : new ProduceRequestData.TopicProduceData().setTopicId(topicId);
            topic.partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(partition)
                    .setRecords(records));
            ProduceRequestData.TopicProduceDataCollection topics = new ProduceRequestData.TopicProduceDataCollection();
            topics.add(topic);
            return new ProduceRequestData().setTransactionalId(transactional ? txnId : null).setAcks((short) -1)
                    .setTimeoutMs(10_000).setTopicData(topics);
        }

        private TxnOffsetCommitRequestData txnOffsetCommit(String txnId, long producerId, short epoch, String group,
                int generation, String member) {
            TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic topic = new TxnOffsetCommitRequestData
                    .TxnOffsetCommitRequestTopic().setName(TOPIC);
            topic.partitions().add(new TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition()
                    .setPartitionIndex(random.nextInt(PARTITIONS)).setCommittedOffset(random.nextInt(20)));
            return new TxnOffsetCommitRequestData().setTransactionalId(txnId).setGroupId(group)
                    .setProducerId(producerId).setProducerEpoch(epoch).setGenerationId(generation)
                    .setMemberId(member).setTopics(new ArrayList<>(List.of(topic)));
        }

        /** Sends {@code body} at a random advertised version it can be written at; returns the connection to use next. */
        private RawConnection exchange(RawConnection raw, Message body) throws Exception {
            ApiKeys key = ApiKeys.forId(((org.apache.kafka.common.protocol.ApiMessage) body).apiKey());
            short[] range = versions.get((int) key.id);
            short version = writableVersion(key, body, range);
            if (version < 0) {
                outcomes.merge(key.name + " not writable", 1, Integer::sum);
                return raw;
            }
            RequestHeader header = new RequestHeader(key, version, "coordinator-fuzz", ++correlationId);
            ByteBuffer frame;
            try {
                raw.sendFrame(RequestUtils.serialize(header.data(), header.headerVersion(), body, version));
                frame = raw.readFrameWithin(ANSWER_MS);
            } catch (IOException e) {
                if (connectedAfter == RESTARTS_BEGUN.get()) {
                    failures.add(key.name + " v" + version + ": no answer (" + e + ") to " + RandomRequests.brief(body));
                    return raw;
                }
                outcomes.merge(key.name + " cut by a restart", 1, Integer::sum);
                raw.close();
                return connect();
            }
            ResponseHeader responseHeader = ResponseHeader.parse(frame, key.responseHeaderVersion(version));
            assertThat(responseHeader.correlationId()).isEqualTo(correlationId);
            AbstractResponse response = AbstractResponse.parseResponse(key, new ByteBufferAccessor(frame), version);
            if (RandomRequests.errorCodes(response.data()).contains(Errors.UNKNOWN_SERVER_ERROR.code())) {
                failures.add(key.name + " v" + version + ": UNKNOWN_SERVER_ERROR for " + RandomRequests.brief(body) + " -> "
                        + RandomRequests.brief(response.data()));
            }
            learn(body, response.data());
            String error = firstError(response.data());
            outcomes.merge(key.name + " " + error, 1, Integer::sum);

            return raw;
        }

        /** A random version of the advertised range at which kafka-clients can write {@code body}, or -1. */
        private short writableVersion(ApiKeys key, Message body, short[] range) {
            int count = range[1] - range[0] + 1;
            int start = random.nextInt(count);
            for (int k = 0; k < count; k++) {
                short version = (short) (range[0] + (start + k) % count);
                if (key == ApiKeys.PRODUCE && version < 3) {
                    continue; // advertised for old clients' sake, refused (KIP-896)
                }
                try {
                    org.apache.kafka.common.protocol.MessageUtil.toByteBufferAccessor(body, version);
                    return version;
                } catch (org.apache.kafka.common.errors.UnsupportedVersionException | NullPointerException e) {
                    // a field this version lacks is set, or one it cannot have null is; try the next
                }
            }
            return -1;
        }

        private void learn(Message request, org.apache.kafka.common.protocol.ApiMessage response) {
            if (response instanceof JoinGroupResponseData join) {
                String group = ((JoinGroupRequestData) request).groupId();
                if (join.errorCode() == Errors.NONE.code() || join.errorCode() == Errors.MEMBER_ID_REQUIRED.code()) {
                    state.member(group, join.memberId());
                }
                if (join.errorCode() == Errors.NONE.code()) {
                    state.generations.put(group, join.generationId());
                }
            } else if (response instanceof ConsumerGroupHeartbeatResponseData heartbeat
                    && heartbeat.errorCode() == Errors.NONE.code()) {
                ConsumerGroupHeartbeatRequestData sent = (ConsumerGroupHeartbeatRequestData) request;
                if (sent.memberEpoch() == -1) {
                    state.consumerMember.remove(CONSUMER_GROUP);
                    state.consumerEpoch.remove(CONSUMER_GROUP);
                } else {
                    state.consumerMember.put(CONSUMER_GROUP, heartbeat.memberId() != null ? heartbeat.memberId()
                            : sent.memberId());
                    state.consumerEpoch.put(CONSUMER_GROUP, heartbeat.memberEpoch());
                }
            } else if (response instanceof InitProducerIdResponseData init && init.errorCode() == Errors.NONE.code()) {
                state.producers.put(((InitProducerIdRequestData) request).transactionalId(),
                        new long[] {init.producerId(), init.producerEpoch()});
            } else if (response instanceof ProduceResponseData produced) {
                ProduceRequestData sent = (ProduceRequestData) request;
                ProduceRequestData.PartitionProduceData data = sent.topicData().iterator().next().partitionData()
                        .get(0);
                RecordBatch batch = ((MemoryRecords) data.records()).batches().iterator().next();
                short error = produced.responses().iterator().next().partitionResponses().get(0).errorCode();
                if (error == Errors.NONE.code() && batch.producerId() >= 0) {
                    state.sequences.put(batch.producerId() + "/" + data.index(), batch.baseSequence() + 1);
                }
            }
        }
    }

    /** The first non-zero error code of the response (top level first), or NONE. */
    private static String firstError(Object message) {
        return RandomRequests.errorCodes(message).stream().filter(c -> c != 0).findFirst()
                .map(c -> Errors.forCode(c).name()).orElse("NONE");
    }
}
