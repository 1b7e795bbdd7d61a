package io.cairn.wire.message;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
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
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.ApiVersionsResponseData;
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
import org.apache.kafka.common.message.ShareAcknowledgeRequestData;
import org.apache.kafka.common.message.ShareAcknowledgeResponseData;
import org.apache.kafka.common.message.ShareFetchRequestData;
import org.apache.kafka.common.message.ShareFetchResponseData;
import org.apache.kafka.common.message.ShareGroupHeartbeatRequestData;
import org.apache.kafka.common.message.ShareGroupHeartbeatResponseData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.RequestUtils;
import org.apache.kafka.common.requests.ResponseHeader;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Random but plausible request sequences for the group and transaction coordinators, from several raw clients at
 * once: joins, syncs, heartbeats, leaves and commits of classic groups, KIP-848 heartbeats of a consumer-protocol
 * group, and InitProducerId, AddPartitionsToTxn, transactional produce, AddOffsetsToTxn, TxnOffsetCommit and EndTxn of
 * transactional ids, each built from what earlier responses said (member ids, generations, epochs, producer ids and
 * sequences) and sometimes from stale or made-up values, at a random advertised version each; where the broker
 * serves share groups (KIP-932), also ShareGroupHeartbeat, ShareFetch and ShareAcknowledge of a share group, with
 * acknowledgements (accept, release, reject, gap) of records earlier fetches acquired. Every request must be
 * answered in time with a response kafka-clients parses and no {@code UNKNOWN_SERVER_ERROR}; {@link #failures} says
 * which were not. The broker may be restarted or killed meanwhile: between {@link #restartBegins} and
 * {@link #restartDone} a failed connection is not held against it, and the clients reconnect to the address the
 * supplier gives then. {@link #takeOverWithStockClients} is the check that follows: the state left behind must not
 * stand in a stock client's way. Used by broker's {@code CoordinatorFuzzIT} and compat-tests'
 * {@code CoordinatorCrashFuzzIT}.
 */
public final class CoordinatorFuzz {

    /** The classic groups, the consumer-protocol group and the transactional ids the clients use. */
    public static final List<String> GROUPS = List.of("g1", "g2");
    public static final String CONSUMER_GROUP = "c1";
    public static final List<String> TXN_IDS = List.of("t1", "t2");
    /** The share group (KIP-932) the clients use when the broker serves share groups. */
    public static final String SHARE_GROUP = "s1";
    private static final int ANSWER_MS = 20_000;

    private final RandomRequests.Target target;
    private final Supplier<InetSocketAddress> address;
    private final Map<Integer, short[]> versions;
    private final State state = new State();
    /** Whether the broker advertises ShareFetch: then the clients also drive a share group. */
    private final boolean shareGroups;
    private final Map<String, Integer> outcomes = new ConcurrentHashMap<>();
    private final List<String> failures = Collections.synchronizedList(new ArrayList<>());
    private final AtomicInteger restartsBegun = new AtomicInteger();
    private final AtomicInteger restartsDone = new AtomicInteger();

    /**
     * Clients of the broker at {@code address} (asked again after each restart), at {@code target} (a topic that
     * exists); waits until the coordinators of every group and transactional id are loaded.
     */
    public CoordinatorFuzz(RandomRequests.Target target, Supplier<InetSocketAddress> address) throws Exception {
        this.target = target;
        this.address = address;
        try (Connection connection = new Connection(address.get())) {
            this.versions = connection.apiVersions();
            this.shareGroups = versions.containsKey((int) ApiKeys.SHARE_FETCH.id)
                    && versions.containsKey((int) ApiKeys.SHARE_GROUP_HEARTBEAT.id);
            connection.awaitCoordinators((byte) 0, List.of(GROUPS.get(0), GROUPS.get(1), CONSUMER_GROUP));
            connection.awaitCoordinators((byte) 1, TXN_IDS);
        }
    }

    /**
     * Broker settings for a fuzzed broker: short session timeouts and a quick sweep of timed-out transactions, so that
     * what the fuzzers leave behind expires within a test (share groups enabled, their record locks held 1 s), and three
     * partitions per internal topic.
     */
    public static Map<String, String> brokerConfig() {
        Map<String, String> config = new HashMap<>();
        config.put("offsets.topic.num.partitions", "3");
        config.put("transaction.state.log.num.partitions", "3");
        config.put("transaction.abort.timed.out.transaction.cleanup.interval.ms", "1000");
        config.put("group.initial.rebalance.delay.ms", "0");
        config.put("group.min.session.timeout.ms", "1000");
        config.put("group.consumer.min.session.timeout.ms", "1000");
        config.put("group.consumer.session.timeout.ms", "3000");
        config.put("group.consumer.min.heartbeat.interval.ms", "500");
        config.put("group.consumer.heartbeat.interval.ms", "1000");
        config.put("group.share.enable", "true");
        config.put("group.share.min.record.lock.duration.ms", "1000");
        config.put("group.share.record.lock.duration.ms", "1000");
        config.put("group.share.min.session.timeout.ms", "1000");
        config.put("group.share.session.timeout.ms", "3000");
        config.put("group.share.min.heartbeat.interval.ms", "500");
        config.put("group.share.heartbeat.interval.ms", "1000");
        config.put("share.coordinator.state.topic.num.partitions", "3");
        return config;
    }

    /** Runs {@code clients} clients of {@code ops} requests each, seeded from {@code seed}, until all are done. */
    public void run(int clients, int ops, long seed) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        try {
            List<Future<?>> running = new ArrayList<>();
            for (int c = 0; c < clients; c++) {
                Client client = new Client(new Random(seed + c));
                running.add(pool.submit(() -> {
                    client.run(ops);
                    return null;
                }));
            }
            for (Future<?> client : running) {
                client.get(4, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Runs {@code restart} (stopping or killing the broker and starting it again) {@code count} times while the
     * clients run, each after 0.5 to 2.5 s drawn from {@code seed}, between {@link #restartBegins} and
     * {@link #restartDone}; the future completes after the last.
     */
    public CompletableFuture<Void> restartsDuring(int count, long seed, Runnable restart) {
        Random random = new Random(seed);
        return CompletableFuture.runAsync(() -> {
            for (int r = 0; r < count; r++) {
                try {
                    Thread.sleep(500 + random.nextInt(2_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
                restartBegins();
                restart.run();
                restartDone();
            }
        });
    }

    /** The broker is about to go away: failures of connections opened before are not its fault. */
    public void restartBegins() {
        restartsBegun.incrementAndGet();
    }

    /** The broker is back (at the address the supplier now gives). */
    public void restartDone() {
        restartsDone.incrementAndGet();
    }

    /** What broke the rules: unanswered requests, UNKNOWN_SERVER_ERROR, unparsable responses. */
    public List<String> failures() {
        return List.copyOf(failures);
    }

    /** The count of each API's answers by first error code (and of requests a restart cut off). */
    public Map<String, Integer> outcomes() {
        return new TreeMap<>(outcomes);
    }

    /**
     * What a stock client must find after the fuzzing: a transactional producer per id initialises (fencing whatever
     * was left) and commits, every partition's last stable offset reaches its high watermark (no transaction left
     * open), and stock consumers join both classic groups, the consumer-protocol group and (where served) the share
     * group and read the topic. Throws {@link AssertionError} naming what failed.
     */
    public void takeOverWithStockClients(String bootstrap) throws Exception {
        for (String txnId : TXN_IDS) {
            commitWithAStockProducer(bootstrap, txnId);
        }
        assertNoTransactionHangs(bootstrap);
        for (String group : GROUPS) {
            if (consumeWithAStockConsumer(bootstrap, group, "classic") == 0) {
                throw new AssertionError("A stock consumer of group " + group + " read nothing in 60 s");
            }
        }
        if (consumeWithAStockConsumer(bootstrap, CONSUMER_GROUP, "consumer") == 0) {
            throw new AssertionError("A stock consumer of group " + CONSUMER_GROUP + " read nothing in 60 s");
        }
        if (shareGroups && shareWithAStockConsumer(bootstrap) == 0) {
            throw new AssertionError("A stock share consumer of group " + SHARE_GROUP + " read nothing in 60 s");
        }
    }

    /**
     * Records a stock share consumer of the share group reads (and accepts) once it has joined, in 60 s at most, with
     * a transactional producer committing a record per partition meanwhile (the share-partitions may start at the
     * log end, and what the fuzzers acquired is theirs until its lock expires).
     */
    private int shareWithAStockConsumer(String bootstrap) {
        Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.GROUP_ID_CONFIG, SHARE_GROUP);
        try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(config, new StringDeserializer(),
                new StringDeserializer())) {
            consumer.subscribe(List.of(target.topic()));
            int read = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            for (int round = 0; read == 0 && System.nanoTime() < deadline; round++) {
                if (round % 10 == 0) {
                    commitWithAStockProducer(bootstrap, TXN_IDS.get(0));
                }
                read += consumer.poll(Duration.ofMillis(500)).count();
            }
            if (read > 0) {
                consumer.commitSync(Duration.ofSeconds(30));
            }
            return read;
        }
    }

    /** A stock transactional producer takes the id over (fencing whatever the fuzzers left) and commits. */
    private void commitWithAStockProducer(String bootstrap, String txnId) {
        Map<String, Object> config = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId, ProducerConfig.MAX_BLOCK_MS_CONFIG, 60_000);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(config, new StringSerializer(),
                new StringSerializer())) {
            producer.initTransactions();
            producer.beginTransaction();
            for (int p = 0; p < target.partitions(); p++) {
                producer.send(new ProducerRecord<>(target.topic(), p, "k", "committed by " + txnId));
            }
            producer.commitTransaction();
        }
    }

    /** Every partition's last stable offset reaches its high watermark within 60 s: no transaction is left open. */
    private void assertNoTransactionHangs(String bootstrap) throws Exception {
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (int p = 0; p < target.partitions(); p++) {
            latest.put(new TopicPartition(target.topic(), p), OffsetSpec.latest());
        }
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (true) {
                Map<TopicPartition, ListOffsetsResultInfo> committed = admin.listOffsets(latest,
                        new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).all().get(10, TimeUnit.SECONDS);
                Map<TopicPartition, ListOffsetsResultInfo> uncommitted = admin.listOffsets(latest).all()
                        .get(10, TimeUnit.SECONDS);
                List<TopicPartition> open = latest.keySet().stream()
                        .filter(tp -> committed.get(tp).offset() != uncommitted.get(tp).offset()).toList();
                if (open.isEmpty()) {
                    return;
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("Last stable offsets still short of the high watermarks after 60 s: "
                            + open + " read_committed " + committed + ", read_uncommitted " + uncommitted);
                }
                Thread.sleep(200);
            }
        }
    }

    /** Records a stock consumer of {@code group} reads (read_committed) once it has joined, in 60 s at most. */
    private int consumeWithAStockConsumer(String bootstrap, String group, String protocol) {
        Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.GROUP_ID_CONFIG, group, ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest", ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                "read_committed");
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config, new StringDeserializer(),
                new StringDeserializer())) {
            consumer.subscribe(List.of(target.topic()));
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
        /** The consumer-protocol group's member (id, epoch); null when none has joined or it left. */
        volatile String consumerMember;
        volatile int consumerEpoch;
        final Map<String, long[]> producers = new ConcurrentHashMap<>();
        final Map<String, Integer> sequences = new ConcurrentHashMap<>();
        /** The share group's member (id, epoch) and its share session's next epoch (0: none open). */
        volatile String shareMember;
        volatile int shareMemberEpoch;
        volatile int shareSessionEpoch;
        /** The share-partitions the coordinator last assigned the member (only those have share state yet). */
        final Set<Integer> shareAssigned = ConcurrentHashMap.newKeySet();
        /** Records ShareFetch said were acquired: {partition, first offset, last offset}, the latest few. */
        final List<long[]> acquired = Collections.synchronizedList(new ArrayList<>());

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
    private final class Client {
        private final Random random;
        private int correlationId;
        private int connectedAfter;

        Client(Random random) {
            this.random = random;
        }

        void run(int ops) throws Exception {
            Connection raw = connect();
            try {
                for (int i = 0; i < ops && failures.isEmpty(); i++) {
                    raw = step(raw);
                }
            } finally {
                raw.close();
            }
        }

        /** A connection to the broker of the moment, waiting out a restart. */
        private Connection connect() throws Exception {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (true) {
                int begun = restartsBegun.get();
                if (begun == restartsDone.get()) {
                    try {
                        Connection raw = new Connection(address.get());
                        connectedAfter = begun;
                        return raw;
                    } catch (IOException e) {
                        if (begun == restartsBegun.get() || System.nanoTime() > deadline) {
                            throw e;
                        }
                    }
                }
                Thread.sleep(50);
            }
        }

        private Connection step(Connection raw) throws Exception {
            String group = GROUPS.get(random.nextInt(GROUPS.size()));
            String txnId = TXN_IDS.get(random.nextInt(TXN_IDS.size()));
            long[] producer = state.producers.getOrDefault(txnId, new long[] {-1, -1});
            long producerId = random.nextInt(8) == 0 ? random.nextInt(3) : producer[0];
            short epoch = (short) (random.nextInt(8) == 0 ? producer[1] - 1 : producer[1]);
            String member = state.anyMember(group, random);
            int generation = random.nextInt(8) == 0 ? random.nextInt(4) - 1 : state.generations.getOrDefault(group, -1);
            Message body;
            switch (random.nextInt(shareGroups ? 21 : 17)) {
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
                                new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId(group)
                                        .setTopics(null))));
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
                case 16 -> body = random.nextInt(3) == 0
                        ? (random.nextBoolean() ? new DescribeTransactionsRequestData().setTransactionalIds(
                                new ArrayList<>(TXN_IDS)) : new ListTransactionsRequestData())
                        : new EndTxnRequestData().setTransactionalId(txnId).setProducerId(producerId)
                                .setProducerEpoch(epoch).setCommitted(random.nextBoolean());
                case 17 -> body = shareHeartbeat();
                case 18, 19 -> body = shareFetch();
                default -> body = shareAcknowledge();
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
                    .OffsetCommitRequestTopic().setName(target.topic());
            topic.partitions().add(new OffsetCommitRequestData.OffsetCommitRequestPartition()
                    .setPartitionIndex(random.nextInt(target.partitions())).setCommittedOffset(random.nextInt(20)));
            boolean simple = random.nextInt(3) == 0;
            return new OffsetCommitRequestData().setGroupId(random.nextInt(4) == 0 ? CONSUMER_GROUP : group)
                    .setGenerationIdOrMemberEpoch(simple ? -1 : generation).setMemberId(simple ? "" : member)
                    .setTopics(new ArrayList<>(List.of(topic)));
        }

        /**
         * The member id and epoch of a KIP-848 or KIP-932 heartbeat, from the member the fuzzers know (null: none): a
         * new member joining (epoch 0), the member leaving (-1), a stale or future epoch, or the current one.
         */
        private Map.Entry<String, Integer> heartbeatIdentity(String member, int epoch) {
            int choice = random.nextInt(6);
            if (member == null || choice == 0) {
                return Map.entry(Uuid.randomUuid().toString(), 0);
            }
            return Map.entry(member, choice == 1 ? -1 : choice == 2 ? epoch + random.nextInt(3) - 1 : epoch);
        }

        private ConsumerGroupHeartbeatRequestData consumerHeartbeat() {
            Map.Entry<String, Integer> identity = heartbeatIdentity(state.consumerMember, state.consumerEpoch);
            int epoch = identity.getValue();
            return new ConsumerGroupHeartbeatRequestData().setGroupId(CONSUMER_GROUP).setMemberId(identity.getKey())
                    .setMemberEpoch(epoch).setRebalanceTimeoutMs(2_000).setSubscribedTopicNames(epoch == 0
                            ? new ArrayList<>(List.of(target.topic())) : null).setTopicPartitions(epoch == 0
                            ? new ArrayList<>() : null).setServerAssignor(random.nextInt(4) == 0 ? "uniform" : null);
        }

        private ShareGroupHeartbeatRequestData shareHeartbeat() {
            Map.Entry<String, Integer> identity = heartbeatIdentity(state.shareMember, state.shareMemberEpoch);
            int epoch = identity.getValue();
            return new ShareGroupHeartbeatRequestData().setGroupId(SHARE_GROUP).setMemberId(identity.getKey())
                    .setMemberEpoch(epoch).setSubscribedTopicNames(epoch == 0
                            ? new ArrayList<>(List.of(target.topic())) : null);
        }

        /** The session epoch to send: the next one mostly, sometimes a stale one, a new session or a close. */
        private int sessionEpoch() {
            int next = state.shareSessionEpoch;
            return switch (random.nextInt(10)) {
                case 0 -> 0;
                case 1 -> -1;
                case 2 -> next + random.nextInt(3) - 1;
                default -> next;
            };
        }

        /** Acknowledgements of some of the records the fuzzers acquired, of random types (0 gap ... 3 reject). */
        private List<long[]> someAcquired() {
            List<long[]> picked = new ArrayList<>();
            synchronized (state.acquired) {
                for (long[] range : state.acquired) {
                    if (random.nextInt(3) == 0) {
                        picked.add(range);
                    }
                }
            }
            return picked;
        }

        /** One type for the whole range, or one per record (the two forms Kafka accepts), now and then neither. */
        private List<Byte> ackTypes(long first, long last) {
            List<Byte> types = new ArrayList<>();
            int count = random.nextBoolean() || last - first >= 500 ? 1
                    : random.nextInt(10) == 0 ? 2 : (int) (last - first + 1);
            for (int i = 0; i < count; i++) {
                types.add((byte) random.nextInt(4));
            }
            return types;
        }

        /**
         * A ShareFetch of the member's assigned share-partitions: a share-partition the group coordinator has not
         * initialized yet fails with UNKNOWN_SERVER_ERROR in Kafka too (its persister's INVALID_REQUEST, mapped by
         * {@code SharePartition.fetchPersisterError}), and no stock client asks for one. A heartbeat while there is
         * no assignment.
         */
        private Message shareFetch() {
            List<Integer> assigned = new ArrayList<>(state.shareAssigned);
            if (state.shareMember == null || assigned.isEmpty()) {
                return shareHeartbeat();
            }
            ShareFetchRequestData.FetchPartitionCollection partitions = new ShareFetchRequestData
                    .FetchPartitionCollection();
            int sessionEpoch = sessionEpoch();
            // Acknowledgements on a fetch that opens a session are an INVALID_REQUEST: now and then only.
            List<long[]> acks = sessionEpoch > 0 || random.nextInt(10) == 0 ? someAcquired() : List.of();
            for (int p : assigned) {
                List<ShareFetchRequestData.AcknowledgementBatch> batches = new ArrayList<>();
                for (long[] range : acks) {
                    if (range[0] == p) {
                        batches.add(new ShareFetchRequestData.AcknowledgementBatch().setFirstOffset(range[1])
                                .setLastOffset(range[2]).setAcknowledgeTypes(ackTypes(range[1], range[2])));
                    }
                }
                if (random.nextInt(4) != 0 || !batches.isEmpty()) {
                    partitions.add(new ShareFetchRequestData.FetchPartition().setPartitionIndex(p)
                            .setAcknowledgementBatches(batches));
                }
            }
            ShareFetchRequestData.FetchTopicCollection topics = new ShareFetchRequestData.FetchTopicCollection();
            topics.add(new ShareFetchRequestData.FetchTopic().setTopicId(target.topicId()).setPartitions(partitions));
            return new ShareFetchRequestData().setGroupId(SHARE_GROUP).setMemberId(state.shareMember)
                    .setShareSessionEpoch(sessionEpoch).setMaxWaitMs(random.nextInt(200)).setMinBytes(1)
                    .setMaxBytes(1 << 20).setMaxRecords(1 + random.nextInt(50)).setBatchSize(1 + random.nextInt(50))
                    .setTopics(topics);
        }

        /** A ShareAcknowledge of some acquired records of the member's assigned share-partitions. */
        private Message shareAcknowledge() {
            List<Integer> assigned = new ArrayList<>(state.shareAssigned);
            if (state.shareMember == null || assigned.isEmpty()) {
                return shareHeartbeat();
            }
            ShareAcknowledgeRequestData.AcknowledgePartitionCollection partitions = new ShareAcknowledgeRequestData
                    .AcknowledgePartitionCollection();
            List<long[]> acks = someAcquired();
            for (int p : assigned) {
                List<ShareAcknowledgeRequestData.AcknowledgementBatch> batches = new ArrayList<>();
                for (long[] range : acks) {
                    if (range[0] == p) {
                        batches.add(new ShareAcknowledgeRequestData.AcknowledgementBatch().setFirstOffset(range[1])
                                .setLastOffset(range[2]).setAcknowledgeTypes(ackTypes(range[1], range[2])));
                    }
                }
                if (!batches.isEmpty()) {
                    partitions.add(new ShareAcknowledgeRequestData.AcknowledgePartition().setPartitionIndex(p)
                            .setAcknowledgementBatches(batches));
                }
            }
            ShareAcknowledgeRequestData.AcknowledgeTopicCollection topics = new ShareAcknowledgeRequestData
                    .AcknowledgeTopicCollection();
            topics.add(new ShareAcknowledgeRequestData.AcknowledgeTopic().setTopicId(target.topicId())
                    .setPartitions(partitions));
            return new ShareAcknowledgeRequestData().setGroupId(SHARE_GROUP).setMemberId(state.shareMember)
                    .setShareSessionEpoch(sessionEpoch()).setTopics(topics);
        }

        private AddPartitionsToTxnRequestData addPartitions(String txnId, long producerId, short epoch) {
            AddPartitionsToTxnTopicCollection topics = new AddPartitionsToTxnTopicCollection();
            List<Integer> partitions = new ArrayList<>();
            for (int p = 0; p < target.partitions(); p++) {
                if (random.nextBoolean()) {
                    partitions.add(p);
                }
            }
            topics.add(new AddPartitionsToTxnTopic().setName(target.topic()).setPartitions(partitions));
            return new AddPartitionsToTxnRequestData().setV3AndBelowTransactionalId(txnId)
                    .setV3AndBelowProducerId(producerId).setV3AndBelowProducerEpoch(epoch).setV3AndBelowTopics(topics);
        }

        private ProduceRequestData produce(String txnId, long producerId, short producerEpoch) {
            short epoch = producerId >= 0 && producerEpoch < 0 ? 0 : producerEpoch;
            int partition = random.nextInt(target.partitions());
            boolean transactional = random.nextInt(4) != 0;
            String key = producerId + "/" + partition;
            int sequence = state.sequences.getOrDefault(key, 0) + (random.nextInt(10) == 0 ? 1 : 0);
            MemoryRecords records = MemoryRecords.withRecords(RecordBatch.CURRENT_MAGIC_VALUE, 0L, Compression.NONE,
                    TimestampType.CREATE_TIME, producerId, epoch, producerId < 0 ? -1 : sequence,
                    RecordBatch.NO_PARTITION_LEADER_EPOCH, transactional && producerId >= 0,
                    new SimpleRecord(System.currentTimeMillis(), "k".getBytes(StandardCharsets.UTF_8),
                            ("fuzz " + key + " " + sequence).getBytes(StandardCharsets.UTF_8)));
            ProduceRequestData.TopicProduceData topic = random.nextBoolean()
                    ? new ProduceRequestData.TopicProduceData().setName(target.topic())
                    : new ProduceRequestData.TopicProduceData().setTopicId(target.topicId());
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
                    .TxnOffsetCommitRequestTopic().setName(target.topic());
            topic.partitions().add(new TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition()
                    .setPartitionIndex(random.nextInt(target.partitions())).setCommittedOffset(random.nextInt(20)));
            return new TxnOffsetCommitRequestData().setTransactionalId(txnId).setGroupId(group)
                    .setProducerId(producerId).setProducerEpoch(epoch).setGenerationId(generation)
                    .setMemberId(member).setTopics(new ArrayList<>(List.of(topic)));
        }

        /** Sends {@code body} at a random advertised version it can be written at; returns the connection to use. */
        private Connection exchange(Connection raw, Message body) throws Exception {
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
                if (connectedAfter == restartsBegun.get()) {
                    failures.add(key.name + " v" + version + ": no answer (" + e + ") to "
                            + RandomRequests.brief(body));
                    return raw;
                }
                outcomes.merge(key.name + " cut by a restart", 1, Integer::sum);
                raw.close();
                return connect();
            }
            ApiMessage response = RandomRequests.checkAnswer(key, version, correlationId, frame, body,
                    key.name + " v" + version, failures);
            if (response == null) {
                return raw;
            }
            learn(body, response);
            String error = firstError(response);

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
            if (response instanceof ShareGroupHeartbeatResponseData heartbeat) {
                ShareGroupHeartbeatRequestData sent = (ShareGroupHeartbeatRequestData) request;
                if (heartbeat.errorCode() == Errors.NONE.code()) {
                    state.shareMember = sent.memberEpoch() == -1 ? null : sent.memberId();
                    state.shareMemberEpoch = sent.memberEpoch() == -1 ? 0 : heartbeat.memberEpoch();
                    if (sent.memberEpoch() == -1) {
                        state.shareAssigned.clear();
                    } else if (heartbeat.assignment() != null) {
                        state.shareAssigned.clear();
                        heartbeat.assignment().topicPartitions().forEach(t -> state.shareAssigned.addAll(
                                t.partitions()));
                    }
                }
                return;
            }
            if (response instanceof ShareFetchResponseData || response instanceof ShareAcknowledgeResponseData) {
                int sent = request instanceof ShareFetchRequestData fetch ? fetch.shareSessionEpoch()
                        : ((ShareAcknowledgeRequestData) request).shareSessionEpoch();
                short error = response instanceof ShareFetchResponseData fetched ? fetched.errorCode()
                        : ((ShareAcknowledgeResponseData) response).errorCode();
                if (error == Errors.NONE.code()) {
                    // An epoch of 0 opens a session (next 1), -1 closes it (next 0), n is followed by n + 1.
                    state.shareSessionEpoch = sent == -1 ? 0 : sent + 1;
                } else if (error == Errors.SHARE_SESSION_NOT_FOUND.code()
                        || error == Errors.INVALID_SHARE_SESSION_EPOCH.code()) {
                    state.shareSessionEpoch = 0;
                }
                if (response instanceof ShareFetchResponseData fetched) {
                    for (ShareFetchResponseData.ShareFetchableTopicResponse topic : fetched.responses()) {
                        for (ShareFetchResponseData.PartitionData partition : topic.partitions()) {
                            for (ShareFetchResponseData.AcquiredRecords records : partition.acquiredRecords()) {
                                synchronized (state.acquired) {
                                    state.acquired.add(new long[] {partition.partitionIndex(), records.firstOffset(),
                                        records.lastOffset()});
                                    if (state.acquired.size() > 12) {
                                        state.acquired.remove(0);
                                    }
                                }
                            }
                        }
                    }
                }
                return;
            }
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
                    state.consumerMember = null;
                    state.consumerEpoch = 0;
                } else {
                    state.consumerMember = heartbeat.memberId() != null ? heartbeat.memberId() : sent.memberId();
                    state.consumerEpoch = heartbeat.memberEpoch();
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


    /** One TCP connection to the broker, one request at a time. */
    private static final class Connection implements AutoCloseable {

        private final Socket socket = new Socket();
        private final DataInputStream in;
        private final OutputStream out;

        Connection(InetSocketAddress address) throws IOException {
            try {
                socket.connect(address, 10_000);
                socket.setTcpNoDelay(true);
                in = new DataInputStream(socket.getInputStream());
                out = socket.getOutputStream();
            } catch (IOException e) {
                socket.close();
                throw e;
            }
        }

        void sendFrame(ByteBuffer payload) throws IOException {
            ByteBuffer framed = ByteBuffer.allocate(4 + payload.remaining());
            framed.putInt(payload.remaining()).put(payload);
            out.write(framed.array());
            out.flush();
        }

        /** The next response's payload, waiting {@code timeoutMs} at most ({@code SocketTimeoutException}). */
        ByteBuffer readFrameWithin(int timeoutMs) throws IOException {
            socket.setSoTimeout(timeoutMs);
            byte[] payload = new byte[in.readInt()];
            in.readFully(payload);
            return ByteBuffer.wrap(payload);
        }

        /** The advertised version range of each API, by API key. */
        Map<Integer, short[]> apiVersions() throws IOException {
            RequestHeader header = new RequestHeader(ApiKeys.API_VERSIONS, (short) 3, "coordinator-fuzz", 0);
            sendFrame(RequestUtils.serialize(header.data(), header.headerVersion(), new ApiVersionsRequestData()
                    .setClientSoftwareName("cairn-coordinator-fuzz").setClientSoftwareVersion("1"), (short) 3));
            ByteBuffer frame = readFrameWithin(ANSWER_MS);
            ResponseHeader.parse(frame, (short) 0);
            Map<Integer, short[]> versions = new HashMap<>();
            new ApiVersionsResponseData(new ByteBufferAccessor(frame), (short) 3).apiKeys().forEach(api -> versions
                    .put((int) api.apiKey(), new short[] {api.minVersion(), api.maxVersion()}));
            return versions;
        }

        /** FindCoordinator until every key's coordinator is loaded (the first call creates the internal topic). */
        void awaitCoordinators(byte keyType, List<String> keys) throws IOException, InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (true) {
                FindCoordinatorRequestData find = new FindCoordinatorRequestData().setKeyType(keyType)
                        .setCoordinatorKeys(new ArrayList<>(keys));
                RequestHeader header = new RequestHeader(ApiKeys.FIND_COORDINATOR, (short) 4, "warm-up", 1);
                sendFrame(RequestUtils.serialize(header.data(), header.headerVersion(), find, (short) 4));
                ByteBuffer frame = readFrameWithin(ANSWER_MS);
                ResponseHeader.parse(frame, ApiKeys.FIND_COORDINATOR.responseHeaderVersion((short) 4));
                FindCoordinatorResponseData found = new FindCoordinatorResponseData(new ByteBufferAccessor(frame),
                        (short) 4);
                if (found.coordinators().stream().allMatch(c -> c.errorCode() == Errors.NONE.code())) {
                    return;
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("No coordinator for " + keys + " in 60 s: " + found);
                }
                Thread.sleep(100);
            }
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

}
