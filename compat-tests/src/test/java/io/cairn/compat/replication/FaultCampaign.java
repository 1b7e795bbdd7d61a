package io.cairn.compat.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.FaultProxy;
import io.cairn.testkit.FreePorts;
import io.cairn.testkit.RawKafkaClient;
import io.cairn.testkit.Signals;
import io.cairn.testkit.faults.FaultSchedule;
import io.cairn.testkit.faults.History;
import io.cairn.testkit.faults.HistoryChecker;
import io.cairn.wire.message.MetadataRequestData;
import io.cairn.wire.message.MetadataResponseData;
import java.time.Duration;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The seeded fault campaign ({@code bin/cairn-faults}): for each seed, 3 nodes (testkit {@link BrokerCluster}, each
 * node's REPLICATION listener and CONTROLLER listener behind a {@link FaultProxy}: the advertised replication
 * listener and the {@code controller.quorum.voters} entries name the proxies), a data topic and a transactional topic of 3 partitions at
 * replication factor 3 with {@code min.insync.replicas=2}, and a workload that runs throughout: two idempotent
 * acks=all producers, a transactional producer committing two transactions of three and aborting the third, a
 * read_committed consumer of the transactional topic, a consumer group on the data topic committing its offsets,
 * and a monitor reading those offsets back. Meanwhile the faults the seed draws ({@link FaultSchedule}: SIGKILL,
 * SIGSTOP/SIGCONT, clean bounce or network partition of a partition's leader or follower or of the active
 * controller; a partition cuts the node off from the other two both ways, Raft and broker-to-controller links
 * included, while the clients still reach it; and, only when {@code --kinds} names them, power cuts: a SIGKILL after
 * which the node's unsynced log tails are lost, every topic's, internal ones included, as {@link PowerCut} does) are
 * injected one after the other; after each the run waits for every ISR to be full again. Then the
 * topics are read to their ends and {@link HistoryChecker} reports lost, duplicated and reordered records, aborted
 * records visible to read_committed, partial transactions and committed offsets going backwards, and the run prints
 * each fault's unavailability (the longest time its partition went without an acknowledgement, from injection to the
 * end of its quiet time).
 *
 * <p>Arguments: {@code [--kafka] [--seeds A-B | --seed S]... [--faults N] [--kinds kind-target,...]
 * [--config key=value]...}; {@code --kinds} (such as {@code kill-controller}) draws only those faults, from another
 * schedule than the seed's usual one. Exits with 1 when any run finds an anomaly or does not recover; the seed reruns
 * the same schedule. Each fault's line names the leader of its partition when it was injected and the gap measured.
 */
public final class FaultCampaign {

    private static final int PARTITIONS = 3;
    private static final int MIN_ISR = 2;
    private static final int RECORDS_PER_SECOND = 100;
    private static final Duration RECOVERY_TIMEOUT = Duration.ofSeconds(120);
    private static final String HOST = FreePorts.LOOPBACK;
    private static final short METADATA_VERSION = 12;

    private final BrokerKind kind;
    private final long seed;
    private final FaultSchedule schedule;
    private final Map<String, String> config;
    private final History history = new History();
    private final List<ConcurrentSkipListSet<Long>> ackNanos = new ArrayList<>();
    private final ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
    private final AtomicLong sequence = new AtomicLong();
    private final List<Long> paused = new ArrayList<>();
    private volatile boolean running = true;

    private FaultCampaign(BrokerKind kind, long seed, int faults, List<String> kinds, Map<String, String> config) {
        this.kind = kind;
        this.seed = seed;
        this.schedule = FaultSchedule.draw(seed, faults, PARTITIONS, kinds);
        this.config = config;
        for (int p = 0; p < PARTITIONS; p++) {
            ackNanos.add(new ConcurrentSkipListSet<>());
        }
    }

    /**
     * One run's outcome: its findings (null when it did not get that far), its unavailability, its failure, and
     * whether the cluster started at all (a start that fails, as on a machine too loaded to start three JVMs within the
     * harness's limit, has no history to check: it is retried once and never counted as an anomaly).
     */
    record Result(long seed, HistoryChecker.Findings findings, Map<String, List<Long>> unavailableMs, String size,
                  String failure, boolean started) {

        boolean clean() {
            return failure == null && findings != null && findings.clean();
        }

        /**
         * OK; ANOMALY when the checker found one; FAILED when the run stopped before its history was checked clean
         * (a node that did not recover, or did not restart within the harness's limit): a liveness failure to look
         * at, not a finding; NOT STARTED.
         */
        String verdict() {
            if (clean()) {
                return "OK";
            }
            if (!started) {
                return "NOT STARTED";
            }
            return findings != null && !findings.clean() ? "ANOMALY" : "FAILED";
        }
    }

    public static void main(String[] args) throws Exception {
        Options options = Options.parse(args);
        List<Result> results = new ArrayList<>();
        for (long seed : options.seeds) {
            Result result = new FaultCampaign(options.kind, seed, options.faults, options.kinds, options.config).run();
            if (!result.started) {
                System.out.printf("%s seed %d: NOT STARTED (%s); running the seed again%n", options.kind, seed,
                        result.failure);
                result = new FaultCampaign(options.kind, seed, options.faults, options.kinds, options.config).run();
            }
            results.add(result);
            System.out.printf("%s seed %d: %s; %s; %s%n", options.kind, seed, result.verdict(),
                    result.size, result.failure != null ? "failed: " + result.failure : result.findings.summary());
        }
        printSummary(options.kind, results);
        System.exit(results.stream().allMatch(Result::clean) ? 0 : 1);
    }

    private static void printSummary(BrokerKind kind, List<Result> results) {
        Map<String, List<Long>> unavailable = new TreeMap<>();
        for (Result r : results) {
            r.unavailableMs.forEach((k, v) -> unavailable.computeIfAbsent(k, x -> new ArrayList<>()).addAll(v));
        }
        long anomalies = results.stream().filter(r -> !r.clean() && r.started).count();
        long notStarted = results.stream().filter(r -> !r.started).count();
        System.out.printf("%s: %d runs, %d with anomalies or failures (seeds %s), %d not started twice (seeds %s)%n",
                kind, results.size(), anomalies,
                results.stream().filter(r -> !r.clean() && r.started).map(r -> Long.toString(r.seed)).toList(),
                notStarted, results.stream().filter(r -> !r.started).map(r -> Long.toString(r.seed)).toList());
        unavailable.forEach((fault, ms) -> {
            List<Long> sorted = ms.stream().sorted().toList();
            System.out.printf("  %-29s %3d faults: unavailable median %6d ms, max %6d ms%n", fault, sorted.size(),
                    sorted.get((sorted.size() - 1) / 2), sorted.get(sorted.size() - 1));
        });
    }

    /** Set once the cluster has started and the admin client reached it. */
    private boolean started;

    private Result run() {
        System.out.printf("%s %s%n", kind, schedule);
        int[] replication = FreePorts.freePorts(ReplicationClients.NODES);
        int[] controller = FreePorts.freePorts(ReplicationClients.NODES);
        List<FaultProxy> proxies = new ArrayList<>();
        List<FaultProxy> controllerProxies = new ArrayList<>();
        Map<String, List<Long>> unavailable = new LinkedHashMap<>();
        List<Thread> workers = new ArrayList<>();
        try {
            StringBuilder voters = new StringBuilder();
            for (int i = 0; i < ReplicationClients.NODES; i++) {
                proxies.add(FaultProxy.start(0, HOST, replication[i]));
                controllerProxies.add(FaultProxy.start(0, HOST, controller[i]));
                voters.append(i == 0 ? "" : ",").append(i + 1).append('@').append(HOST).append(':')
                        .append(controllerProxies.get(i).port());
            }
            Map<String, String> settings = new LinkedHashMap<>(ReplicationClients.clusterConfig());
            settings.put("replica.lag.time.max.ms", "5000");
            settings.put("controller.quorum.voters", voters.toString());
            settings.putAll(config);
            try (BrokerCluster cluster = BrokerCluster.create(kind, ReplicationClients.NODES, settings,
                    node -> ReplicationClients.proxiedListeners(node, replication[node.nodeId() - 1],
                            proxies.get(node.nodeId() - 1).port(), controller[node.nodeId() - 1]));
                 Admin admin = ReplicationClients.startAndConnect(cluster)) {
                started = true;
                try {
                    String data = "faults-data-" + seed;
                    String txns = "faults-txn-" + seed;
                    ReplicationClients.createTopic(admin, data, PARTITIONS, MIN_ISR);
                    ReplicationClients.createTopic(admin, txns, PARTITIONS, MIN_ISR);
                    String group = "faults-group-" + seed;
                    workers.add(worker("producer-a", () -> produce(cluster, data, "a")));
                    workers.add(worker("producer-b", () -> produce(cluster, data, "b")));
                    workers.add(worker("transactions", () -> transact(cluster, txns)));
                    workers.add(worker("read-committed", () -> readCommitted(cluster, txns)));
                    workers.add(worker("group", () -> consumeInGroup(cluster, data, group)));
                    workers.add(worker("offsets", () -> monitorOffsets(cluster, group)));
                    workers.forEach(Thread::start);
                    Thread.sleep(2_000);
                    for (FaultSchedule.Fault fault : schedule.faults()) {
                        inject(cluster, admin, List.of(proxies, controllerProxies), fault, data, unavailable);
                        awaitRecovery(cluster, admin, List.of(data, txns));
                    }
                    running = false;
                    for (Thread worker : workers) {
                        worker.join(TimeUnit.SECONDS.toMillis(90));
                    }
                    awaitRecovery(cluster, admin, List.of(data, txns));
                    Map<Integer, List<String>> dataValues = readAll(cluster, data, "read_uncommitted");
                    List<String> committed = new ArrayList<>();
                    readAll(cluster, txns, "read_committed").values().forEach(committed::addAll);
                    return new Result(seed, HistoryChecker.check(history, dataValues, committed), unavailable,
                            history.size(), null, true);
                } finally {
                    running = false;
                    resumePaused();
                }
            }
        } catch (Throwable e) {
            return new Result(seed, null, unavailable, history.size(), e + (errors.isEmpty() ? ""
                    : " (client errors, e.g. " + errors.peek() + ")"), started);
        } finally {
            running = false;
            resumePaused();
            proxies.forEach(FaultProxy::close);
            controllerProxies.forEach(FaultProxy::close);
        }
    }

    /**
     * Waits for full ISRs, as Admin sees them and then as each running node's own Metadata answer does; when they do
     * not fill, writes every node's thread dump before failing.
     */
    private static void awaitRecovery(BrokerCluster cluster, Admin admin, List<String> topics) {
        try {
            ReplicationClients.awaitFullIsr(admin, topics);
            awaitEveryNodeSeesFullIsr(cluster, topics);
        } catch (Throwable stuck) {
            threadDumps(cluster);
            throw stuck;
        }
    }

    /**
     * Waits until every running node answers Metadata with a leader and a full ISR for every partition of
     * {@code topics}. A node whose metadata stopped still answers from its last image, and an Admin may ask any node,
     * so only asking each node shows that each one caught up.
     */
    private static void awaitEveryNodeSeesFullIsr(BrokerCluster cluster, List<String> topics) {
        MetadataRequestData request = new MetadataRequestData().setAllowAutoTopicCreation(false);
        topics.forEach(topic -> request.topics().add(new MetadataRequestData.MetadataRequestTopic().setName(topic)));
        for (BrokerProcess node : cluster.nodes()) {
            if (!node.isRunning()) {
                continue;
            }
            await().atMost(RECOVERY_TIMEOUT).pollInterval(Duration.ofMillis(250)).ignoreExceptions()
                    .untilAsserted(() -> {
                        try (RawKafkaClient client = RawKafkaClient.connect(node)) {
                            MetadataResponseData response = client.sendAndReceive(request, METADATA_VERSION,
                                    Duration.ofSeconds(10));
                            assertThat(response.topics()).as("node %s's topics", node.name()).hasSize(topics.size());
                            for (MetadataResponseData.MetadataResponseTopic topic : response.topics()) {
                                for (MetadataResponseData.MetadataResponsePartition p : topic.partitions()) {
                                    assertThat(p.errorCode() == 0 && p.leaderId() >= 0
                                            && p.isrNodes().size() == p.replicaNodes().size())
                                            .as("node %s sees %s-%d with a leader and a full ISR: %s", node.name(),
                                                    topic.name(), p.partitionIndex(), p).isTrue();
                                }
                            }
                        }
                    });
        }
    }

    /**
     * Writes a thread dump of every running node (the JDK's {@code jstack}) beside its log, as
     * {@code <log>.jstack}, so a run that did not recover shows where each broker was.
     */
    static void threadDumps(BrokerCluster cluster) {
        String jstack = java.nio.file.Path.of(System.getProperty("java.home"), "bin", "jstack").toString();
        for (BrokerProcess node : cluster.nodes()) {
            if (!node.isRunning()) {
                continue;
            }
            java.nio.file.Path out = node.logFile().resolveSibling(node.logFile().getFileName() + ".jstack");
            try {
                Process dump = new ProcessBuilder(jstack, Long.toString(node.pid()))
                        .redirectOutput(out.toFile()).redirectErrorStream(true).start();
                dump.waitFor(30, TimeUnit.SECONDS);
                System.out.printf("  thread dump of node %s: %s%n", node.name(), out);
            } catch (Exception e) {
                System.out.printf("  no thread dump of %s: %s%n", node.name(), e);
            }
        }
    }

    private static Thread worker(String name, Runnable body) {
        Thread thread = new Thread(body, "faults-" + name);
        thread.setDaemon(true);
        return thread;
    }

    /** Injects {@code fault}, heals it after its duration, and records its partition's longest gap in acks. */
    private void inject(BrokerCluster cluster, Admin admin, List<List<FaultProxy>> proxies, FaultSchedule.Fault fault,
                        String data, Map<String, List<Long>> unavailable) throws Exception {
        int nodeId = resolve(cluster, admin, fault, data);
        int leader = ReplicationClients.partitions(admin, data).get(fault.partition()).leader().id();
        BrokerProcess node = cluster.node(nodeId);
        long injected = System.nanoTime();
        System.out.printf("  %s on node %d (leader of p%d: %d) at %s%n", fault, nodeId, fault.partition(), leader,
                LocalTime.now());
        switch (fault.kind()) {
            case KILL -> node.kill();
            case POWER -> {
                node.kill();
                Random cuts = new Random(seed ^ fault.durationMs() ^ (fault.quietMs() << 20));
                for (String cut : PowerCut.loseUnsyncedTails(node.dataDir(), topic -> true, dir -> 0L, nodeId, cuts)) {
                    System.out.printf("    %s%n", cut);
                }
            }
            case PAUSE -> signal(node, "STOP");
            case BOUNCE -> node.stop();
            case PARTITION -> isolate(proxies, nodeId, node.pid());
            default -> throw new IllegalStateException();
        }
        Thread.sleep(fault.durationMs());
        switch (fault.kind()) {
            case KILL, BOUNCE, POWER -> cluster.startNode(node);
            case PAUSE -> signal(node, "CONT");
            case PARTITION -> proxies.forEach(listener -> listener.forEach(FaultProxy::heal));
            default -> throw new IllegalStateException();
        }
        Thread.sleep(fault.quietMs());
        long longest = longestGap(ackNanos.get(fault.partition()), injected, System.nanoTime());
        long longestMs = TimeUnit.NANOSECONDS.toMillis(longest);
        unavailable.computeIfAbsent(fault.name(), k -> new ArrayList<>()).add(longestMs);
        if (fault.target() == FaultSchedule.Target.CONTROLLER) {
            // Bimodal: a partition the controller led waits for its session to expire on the next controller, one it
            // followed only for an ISR shrink; so the summary also shows the two apart.
            unavailable.computeIfAbsent(fault.name() + (leader == nodeId ? "/led" : "/followed"),
                    k -> new ArrayList<>()).add(longestMs);
        }
        System.out.printf("    p%d went %d ms without an acknowledgement%n", fault.partition(), longestMs);
    }

    /**
     * Cuts node {@code nodeId} (process {@code pid}) off from the others, both ways: on its own proxies every
     * connection but its own stalls, on the other nodes' proxies its connections do. {@code proxies} holds one list
     * per listener, node {@code i}'s proxy at index {@code i - 1}.
     */
    private static void isolate(List<List<FaultProxy>> proxies, int nodeId, long pid) {
        for (List<FaultProxy> listener : proxies) {
            for (int i = 0; i < listener.size(); i++) {
                listener.get(i).partitionFrom(i == nodeId - 1 ? client -> client != pid : client -> client == pid);
            }
        }
    }

    private int resolve(BrokerCluster cluster, Admin admin, FaultSchedule.Fault fault, String data) throws Exception {
        if (fault.target() == FaultSchedule.Target.CONTROLLER) {
            return cluster.activeControllerId(RECOVERY_TIMEOUT);
        }
        TopicPartitionInfo partition = ReplicationClients.partitions(admin, data).get(fault.partition());
        int leader = partition.leader().id();
        if (fault.target() == FaultSchedule.Target.LEADER) {
            return leader;
        }
        List<Integer> followers = partition.replicas().stream().map(Node::id).filter(id -> id != leader).toList();
        return followers.get(new Random(seed + fault.durationMs()).nextInt(followers.size()));
    }

    private void signal(BrokerProcess node, String signal) {
        Signals.send(node.pid(), signal);
        synchronized (paused) {
            if (signal.equals("STOP")) {
                paused.add(node.pid());
            } else {
                paused.remove(node.pid());
            }
        }
    }

    /** SIGCONT to every node still paused, so that a failed run's cluster can be stopped. */
    private void resumePaused() {
        synchronized (paused) {
            for (long pid : paused) {
                try {
                    new ProcessBuilder("kill", "-CONT", Long.toString(pid)).start().waitFor();
                } catch (Exception e) {
                    errors.add("SIGCONT " + pid + ": " + e);
                }
            }
            paused.clear();
        }
    }

    /** The longest time in [from, to] without an acknowledgement in {@code acks} (nanoTime values). */
    static long longestGap(ConcurrentSkipListSet<Long> acks, long from, long to) {
        long last = from;
        long longest = 0;
        for (long ack : acks.subSet(from, true, to, true)) {
            longest = Math.max(longest, ack - last);
            last = ack;
        }
        return Math.max(longest, to - last);
    }

    /** Sends records round robin over the partitions at {@value #RECORDS_PER_SECOND}/s until the run ends. */
    private void produce(BrokerCluster cluster, String topic, String name) {
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) RECOVERY_TIMEOUT.toMillis());
        props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        long[] next = new long[PARTITIONS];
        long interval = TimeUnit.SECONDS.toNanos(1) / RECORDS_PER_SECOND;
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props, new StringSerializer(),
                new StringSerializer())) {
            long due = System.nanoTime();
            for (long i = 0; running; i++) {
                int partition = (int) (i % PARTITIONS);
                String value = History.dataValue(name, partition, next[partition]++);
                producer.send(new ProducerRecord<>(topic, partition, null, value), (metadata, error) -> {
                    if (error == null) {
                        history.acked(value);
                        ackNanos.get(partition).add(System.nanoTime());
                    } else if (errors.size() < 100) {
                        errors.add(value + ": " + error);
                    }
                });
                due += interval;
                long wait = due - System.nanoTime();
                if (wait > 0) {
                    TimeUnit.NANOSECONDS.sleep(wait);
                }
            }
            producer.flush();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Transactions of 3 records over the partitions: two of three committed, the third aborted. */
    private void transact(BrokerCluster cluster, String topic) {
        Random decisions = new Random(seed * 31 + 7);
        KafkaProducer<String, String> producer = null;
        try {
            while (running) {
                if (producer == null) {
                    producer = transactionalProducer(cluster);
                }
                long txn = sequence.incrementAndGet();
                List<String> values = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    values.add(History.txnValue(txn, i));
                }
                boolean commit = decisions.nextInt(3) != 0;
                history.began(txn, values);
                try {
                    producer.beginTransaction();
                    for (int i = 0; i < values.size(); i++) {
                        producer.send(new ProducerRecord<>(topic, (int) ((txn + i) % PARTITIONS), null,
                                values.get(i)));
                    }
                    if (commit) {
                        producer.commitTransaction();
                        history.ended(txn, History.Outcome.COMMITTED);
                    } else {
                        history.ended(txn, History.Outcome.ABORTED);
                        producer.abortTransaction();
                    }
                } catch (ProducerFencedException | OutOfOrderSequenceException | UnsupportedVersionException
                         | AuthorizationException | InvalidProducerEpochException e) {
                    history.ended(txn, History.Outcome.UNKNOWN);
                    producer.close(Duration.ZERO);
                    producer = null;
                } catch (KafkaException e) {
                    // A failed or timed-out commit: its outcome is unknown until an abort is accepted.
                    history.ended(txn, History.Outcome.UNKNOWN);
                    try {
                        producer.abortTransaction();
                        history.ended(txn, History.Outcome.ABORTED);
                    } catch (KafkaException abortFailed) {
                        producer.close(Duration.ZERO);
                        producer = null;
                    }
                }
                Thread.sleep(20);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            errors.add("transactions: " + e);
        } finally {
            if (producer != null) {
                producer.close(Duration.ofSeconds(30));
            }
        }
    }

    private KafkaProducer<String, String> transactionalProducer(BrokerCluster cluster) throws InterruptedException {
        while (running) {
            Map<String, Object> props = new HashMap<>();
            props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
            props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "faults-" + seed);
            props.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 10_000);
            props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 30_000);
            props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
            props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
            KafkaProducer<String, String> producer = new KafkaProducer<>(props, new StringSerializer(),
                    new StringSerializer());
            try {
                producer.initTransactions();
                return producer;
            } catch (KafkaException e) {
                producer.close(Duration.ZERO);
                Thread.sleep(500);
            }
        }
        throw new InterruptedException("the run ended");
    }

    /** Tails the transactional topic with read_committed while the run goes on. */
    private void readCommitted(BrokerCluster cluster, String topic) {
        try (KafkaConsumer<String, String> consumer = consumer(cluster, "read_committed", null)) {
            List<TopicPartition> partitions = partitions(topic);
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            while (running) {
                try {
                    for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                        history.seenCommitted(record.value());
                    }
                } catch (KafkaException e) {
                    errors.add("read_committed: " + e);
                }
            }
        }
    }

    /** A group member on the data topic committing its positions after each poll synchronously (each ack kept). */
    private void consumeInGroup(BrokerCluster cluster, String topic, String group) {
        try (KafkaConsumer<String, String> consumer = consumer(cluster, "read_uncommitted", group)) {
            consumer.subscribe(List.of(topic));
            while (running) {
                try {
                    if (!consumer.poll(Duration.ofMillis(200)).isEmpty()) {
                        Map<TopicPartition, OffsetAndMetadata> positions = new HashMap<>();
                        for (TopicPartition tp : consumer.assignment()) {
                            positions.put(tp, new OffsetAndMetadata(consumer.position(tp)));
                        }
                        consumer.commitSync(positions, Duration.ofSeconds(10));
                        long acknowledged = System.nanoTime();
                        positions.forEach((tp, offset) -> history.acknowledgedCommit(tp.partition(),
                            offset.offset(), acknowledged));
                    }
                } catch (KafkaException e) {
                    errors.add("group: " + e);
                }
            }
        }
    }

    /** Reads the group's committed offsets back every 500 ms. */
    private void monitorOffsets(BrokerCluster cluster, String group) {
        try (Admin admin = ReplicationClients.admin(cluster)) {
            while (running) {
                try {
                    long now = System.nanoTime();
                    Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group)
                            .partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS);
                    offsets.forEach((tp, offset) -> {
                        if (offset != null) {
                            history.committedOffset(tp.partition(), offset.offset(), now);
                        }
                    });
                } catch (Exception e) {
                    // unavailable while a fault lasts; the next read tries again
                }
                Thread.sleep(500);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Every partition's values from the log start to the end ({@code isolation} decides the end), in order. */
    private Map<Integer, List<String>> readAll(BrokerCluster cluster, String topic, String isolation) {
        Map<Integer, List<String>> values = new TreeMap<>();
        try (KafkaConsumer<String, String> consumer = consumer(cluster, isolation, null)) {
            List<TopicPartition> partitions = partitions(topic);
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, Duration.ofSeconds(60));
            long deadline = System.nanoTime() + RECOVERY_TIMEOUT.toNanos();
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("could not read " + topic + " to " + ends);
                }
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    values.computeIfAbsent(record.partition(), p -> new ArrayList<>()).add(record.value());
                }
            }
        }
        return values;
    }

    private static List<TopicPartition> partitions(String topic) {
        List<TopicPartition> partitions = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
            partitions.add(new TopicPartition(topic, p));
        }
        return partitions;
    }

    private static KafkaConsumer<String, String> consumer(BrokerCluster cluster, String isolation, String group) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        if (group != null) {
            props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        }
        return new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer());
    }

    /** The command line. */
    private static final class Options {
        private BrokerKind kind = BrokerKind.CAIRN;
        private final List<Long> seeds = new ArrayList<>();
        private int faults = 5;
        private final List<String> kinds = new ArrayList<>();
        private final Map<String, String> config = new HashMap<>();

        static Options parse(String[] args) {
            Options options = new Options();
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--kafka" -> options.kind = BrokerKind.KAFKA;
                    case "--seed" -> options.seeds.add(Long.parseLong(value(args, ++i)));
                    case "--seeds" -> {
                        String[] range = value(args, ++i).split("-", 2);
                        long from = Long.parseLong(range[0]);
                        long to = range.length > 1 ? Long.parseLong(range[1]) : from;
                        for (long s = from; s <= to; s++) {
                            options.seeds.add(s);
                        }
                    }
                    case "--faults" -> options.faults = Integer.parseInt(value(args, ++i));
                    case "--kinds" -> options.kinds.addAll(List.of(value(args, ++i).split(",")));
                    case "--config" -> {
                        String[] pair = value(args, ++i).split("=", 2);
                        options.config.put(pair[0], pair.length > 1 ? pair[1] : "");
                    }
                    default -> throw new IllegalArgumentException("Unknown option " + args[i] + "; usage: [--kafka] "
                            + "[--seeds A-B | --seed S]... [--faults N] [--kinds kind-target,...] "
                            + "[--config key=value]...");
                }
            }
            if (options.seeds.isEmpty()) {
                options.seeds.add(1L);
            }
            return options;
        }

        private static String value(String[] args, int i) {
            if (i >= args.length) {
                throw new IllegalArgumentException(args[i - 1] + " needs a value");
            }
            return args[i];
        }
    }
}
