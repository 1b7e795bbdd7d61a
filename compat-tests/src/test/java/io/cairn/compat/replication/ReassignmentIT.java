package io.cairn.compat.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.compat.harness.KafkaHalfInFaults;
import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.ClusterNode;
import io.cairn.testkit.FaultProxy;
import io.cairn.testkit.FreePorts;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.KafkaDistribution;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Partition reassignments that move data, on a three-node cluster, the same on Cairn and the reference Kafka:
 * <ol>
 *   <li>{@code kafka-reassign-partitions}: {@code --generate} proposes an assignment on brokers 2 and 3 for a topic
 *   whose 2 partitions live on broker 1 alone; {@code --execute} moves partition 0 to [2,3] (replication factor 1 to
 *   2) and partition 1 to [3] under a replication throttle ({@code --throttle 1000000}: the brokers' leader and
 *   follower rates and the topic's throttled replicas are set); {@code --verify --preserve-throttles} until both are
 *   completed, then a plain {@code --verify}, which clears the throttles (IncrementalAlterConfigs DELETE), so no
 *   broker or topic reports them afterwards; Admin describes the new replicas, ISR and leaders, the new leaders serve every record in order, and broker 1's
 *   log directory no longer holds the partitions.</li>
 *   <li>{@code Admin.alterPartitionReassignments} adds a replica to a partition of replication factor 1 under
 *   continuous acks=all produce: the new replica catches up, joins the ISR, the reassignment completes; it becomes
 *   the leader (a reorder and a preferred election), then the partition moves to a third broker, away from its
 *   leader; that broker serves every acknowledged record in order, once (the producer is idempotent).</li>
 *   <li>A reassignment that cannot progress (broker 1's REPLICATION listener, where the new replicas fetch from, is
 *   behind a testkit {@link FaultProxy} that is partitioned: the extreme of a throttle), which {@code --verify}
 *   shows in progress, is cancelled with {@code kafka-reassign-partitions --cancel --preserve-throttles}: the
 *   partition reverts to its original replica, the brokers that were being added drop their logs, and after the
 *   heal it takes and serves records as before; the same reassignment then completes and its new leader serves them
 *   all.</li>
 *   <li>The broker being added is killed while it cannot fetch; once it is back (and the link healed) it catches
 *   up and the reassignment completes.</li>
 * </ol>
 */
@Timeout(600)
@ExtendWith(BrokerLogsExtension.class)
class ReassignmentIT {

    /** The temp files and directories of this class's tests, removed after them. */
    @TempDir
    static Path tmp;

    private static final String HOST = FreePorts.LOOPBACK;
    private static final String TOOL = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand";
    private static final Duration TIMEOUT = Duration.ofSeconds(90);
    private static final int RECORDS_PER_PARTITION = 3_000;
    /** What the replica added under load has to fetch before it can catch up with the live records. */
    private static final int CATCH_UP_RECORDS = 30_000;
    /** acks=all records acknowledged after the reassignment completed, with the new replica in the ISR. */
    private static final int AFTER_COMPLETION = 100;
    private static final Pattern PROPOSED = Pattern.compile("\"partition\":(\\d+),\"replicas\":\\[([\\d,]*)]");

    @KafkaHalfInFaults
    void reassignmentsMoveDataCompleteAndCancel(BrokerKind kind) throws Exception {
        // Given: every node's REPLICATION listener behind a proxy (healed until the cancel case)
        int[] replication = FreePorts.freePorts(ReplicationClients.NODES);
        List<FaultProxy> proxies = new ArrayList<>();
        try {
            for (int port : replication) {
                proxies.add(FaultProxy.start(0, HOST, port));
            }
            // Kafka deletes a removed replica's renamed log after log.segment.delete.delay.ms (60 s); Cairn at once.
            Map<String, String> config = Map.of("log.segment.delete.delay.ms", "1000");
            try (BrokerCluster cluster = BrokerCluster.create(kind, ReplicationClients.NODES, config,
                    node -> listeners(node, replication[node.nodeId() - 1], proxies.get(node.nodeId() - 1).port()));
                 Admin admin = ReplicationClients.startAndConnect(cluster)) {
                reassignPartitionsToolMovesData(cluster, admin);
                addingAReplicaUnderAcksAllLosesNothing(cluster, admin);
                cancelRevertsToTheOriginalReplicas(cluster, admin, proxies.get(0));
                anAddedReplicaKilledBeforeItCaughtUpCompletesAfterItsRestart(cluster, admin, proxies.get(0));
            }
        } finally {
            proxies.forEach(FaultProxy::close);
        }
    }

    /** Case 1: --generate, --execute, --verify of a move off broker 1 that changes a replication factor. */
    private static void reassignPartitionsToolMovesData(BrokerCluster cluster, Admin admin) throws Exception {
        long begin = System.nanoTime();
        String topic = ReplicationClients.uniqueName("moved");
        create(admin, topic, Map.of(0, List.of(1), 1, List.of(1)));
        List<List<String>> produced = List.of(produce(cluster, topic, 0, RECORDS_PER_PARTITION),
                produce(cluster, topic, 1, RECORDS_PER_PARTITION));
        Path work = Files.createTempDirectory(tmp, "reassign");
        Path topics = write(work.resolve("topics.json"), "{\"version\":1,\"topics\":[{\"topic\":\"" + topic + "\"}]}");
        Path plan = write(work.resolve("plan.json"), "{\"version\":1,\"partitions\":["
                + "{\"topic\":\"" + topic + "\",\"partition\":0,\"replicas\":[2,3]},"
                + "{\"topic\":\"" + topic + "\",\"partition\":1,\"replicas\":[3]}]}");

        // When
        JavaTool.Result generated = tool(cluster, "--generate", "--topics-to-move-json-file", topics.toString(),
                "--broker-list", "2,3");
        JavaTool.Result executed = tool(cluster, "--execute", "--throttle", "1000000", "--reassignment-json-file",
                plan.toString());
        await().atMost(TIMEOUT).pollInSameThread().untilAsserted(() -> assertThat(throttleConfigs(admin, topic))
                .containsEntry("1:leader.replication.throttled.rate", "1000000")
                .containsEntry("3:follower.replication.throttled.rate", "1000000")
                .containsEntry("topic:leader.replication.throttled.replicas", "0:1,1:1")
                .containsKey("topic:follower.replication.throttled.replicas"));
        List<JavaTool.Result> verifies = new ArrayList<>();
        await().atMost(TIMEOUT).pollInterval(Duration.ofSeconds(1)).pollInSameThread().untilAsserted(() -> {
            JavaTool.Result verified = tool(cluster, "--verify", "--preserve-throttles", "--reassignment-json-file",
                    plan.toString());
            verifies.add(verified);
            assertThat(verified.exitCode()).as(verified.toString()).isZero();
            assertThat(verified.stdout()).contains("Reassignment of partition " + topic + "-0 is completed.",
                    "Reassignment of partition " + topic + "-1 is completed.");
        });

        // Then
        assertThat(generated.exitCode()).as(generated.toString()).isZero();
        assertThat(generated.stdout()).contains("Current partition replica assignment",
                "Proposed partition reassignment configuration");
        String proposal = generated.stdout().substring(generated.stdout().indexOf("Proposed"));
        Map<Integer, List<Integer>> proposed = proposedReplicas(proposal);
        assertThat(proposed).as(generated.toString()).containsOnlyKeys(0, 1);
        assertThat(proposed.values()).allSatisfy(replicas -> assertThat(replicas).hasSize(1).isSubsetOf(2, 3));
        assertThat(executed.exitCode()).as(executed.toString()).isZero();
        assertThat(executed.stdout()).contains("Successfully started partition reassignments for " + topic + "-0,"
                + topic + "-1");
        assertThat(executed.stdout()).contains("Warning: You must run --verify periodically, until the "
                + "reassignment completes, to ensure the throttle is removed.");
        JavaTool.Result cleared = tool(cluster, "--verify", "--reassignment-json-file", plan.toString());
        assertThat(cleared.exitCode()).as(cleared.toString()).isZero();
        assertThat(cleared.stdout()).contains("is completed.", "Clearing broker-level throttles",
                "Clearing topic-level throttles on topic " + topic);
        await().atMost(TIMEOUT).pollInSameThread().untilAsserted(() -> assertThat(throttleConfigs(admin, topic))
                .as("throttles left after a plain --verify").isEmpty());
        await().atMost(TIMEOUT).pollInSameThread().ignoreExceptions().untilAsserted(() -> {
            List<TopicPartitionInfo> partitions = ReplicationClients.partitions(admin, topic);
            assertThat(ids(partitions.get(0).replicas())).containsExactly(2, 3);
            assertThat(ids(partitions.get(0).isr())).containsExactlyInAnyOrder(2, 3);
            assertThat(partitions.get(0).leader().id()).isEqualTo(2);
            assertThat(ids(partitions.get(1).replicas())).containsExactly(3);
            assertThat(ids(partitions.get(1).isr())).containsExactly(3);
            assertThat(partitions.get(1).leader().id()).isEqualTo(3);
        });
        assertThat(consume(cluster, new TopicPartition(topic, 0), RECORDS_PER_PARTITION))
                .containsExactlyElementsOf(produced.get(0));
        assertThat(consume(cluster, new TopicPartition(topic, 1), RECORDS_PER_PARTITION))
                .containsExactlyElementsOf(produced.get(1));
        awaitNoLog(cluster, 1, topic, 0);
        awaitNoLog(cluster, 1, topic, 1);
        assertThat(logDirs(cluster, 2, topic)).containsExactly(topic + "-0");
        assertThat(logDirs(cluster, 3, topic)).containsExactlyInAnyOrder(topic + "-0", topic + "-1");
        System.out.printf("%s: kafka-reassign-partitions moved %s off broker 1 in %d verify run(s), %d ms%n",
                cluster.kind(), topic, verifies.size(), (System.nanoTime() - begin) / 1_000_000);
    }

    /**
     * Case 2, under one continuous acks=all producer: a replica added to an RF 1 partition ([1] to [1,2]) catches up
     * and joins the ISR; it becomes the leader (a reorder, which completes at once, and a preferred election); then
     * the partition moves to [3], away from its leader. Broker 3 serves every acknowledged record in order, once.
     */
    private static void addingAReplicaUnderAcksAllLosesNothing(BrokerCluster cluster, Admin admin) throws Exception {
        long begin = System.nanoTime();
        String topic = ReplicationClients.uniqueName("grown");
        TopicPartition tp = new TopicPartition(topic, 0);
        create(admin, topic, Map.of(0, List.of(1)));
        produce(cluster, topic, 0, CATCH_UP_RECORDS);
        AtomicBoolean stop = new AtomicBoolean();
        List<String> acked = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> producing = CompletableFuture.runAsync(() -> produceUntil(cluster, topic, stop,
                acked));
        List<Integer> ackedAt = new ArrayList<>();
        try {
            // When / Then: the replica joins
            reassignAndAwait(admin, tp, List.of(1, 2), 1, acked, producing);
            ackedAt.add(acked.size());

            // When / Then: it leads
            admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(2, 1)))))
                    .all().get(30, TimeUnit.SECONDS);
            await().atMost(TIMEOUT).pollInSameThread().ignoreExceptions().untilAsserted(() -> {
                admin.electLeaders(ElectionType.PREFERRED, Set.of(tp)).partitions().get(10, TimeUnit.SECONDS);
                assertThat(ReplicationClients.leader(admin, topic, 0)).isEqualTo(2);
            });
            awaitMoreAcks(acked, producing);
            ackedAt.add(acked.size());

            // When / Then: the whole partition moves away from its leader
            reassignAndAwait(admin, tp, List.of(3), 3, acked, producing);
        } finally {
            stop.set(true);
        }
        producing.get(60, TimeUnit.SECONDS);
        List<String> sent = List.copyOf(acked);
        List<String> consumed = consume(cluster, tp, CATCH_UP_RECORDS + sent.size());
        assertThat(consumed.subList(CATCH_UP_RECORDS, consumed.size())).containsExactlyElementsOf(sent);
        awaitNoLog(cluster, 1, topic, 0);
        awaitNoLog(cluster, 2, topic, 0);
        System.out.printf("%s: replica 2 joined %s, led it, and the partition moved to 3 under acks=all (%d records "
                + "acknowledged, %s by each step) in %d ms%n", cluster.kind(), topic, sent.size(), ackedAt,
                (System.nanoTime() - begin) / 1_000_000);
    }

    /**
     * Reassigns {@code tp} to {@code target} and waits until that completed (the ISR is the target, {@code leader}
     * leads) and {@value #AFTER_COMPLETION} more records were acknowledged.
     */
    private static void reassignAndAwait(Admin admin, TopicPartition tp, List<Integer> target, int leader,
                                         List<String> acked, CompletableFuture<Void> producing) throws Exception {
        admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(target))))
                .all().get(30, TimeUnit.SECONDS);
        await().atMost(TIMEOUT).pollInSameThread().ignoreExceptions().untilAsserted(() -> {
            assertThat(producing).isNotDone();
            assertThat(admin.listPartitionReassignments(Set.of(tp)).reassignments().get(10, TimeUnit.SECONDS))
                    .isEmpty();
            TopicPartitionInfo p = ReplicationClients.partitions(admin, tp.topic()).get(tp.partition());
            assertThat(ids(p.replicas())).containsExactlyElementsOf(target);
            assertThat(ids(p.isr())).containsExactlyInAnyOrderElementsOf(target);
            assertThat(p.leader().id()).isEqualTo(leader);
        });
        awaitMoreAcks(acked, producing);
    }

    private static void awaitMoreAcks(List<String> acked, CompletableFuture<Void> producing) {
        int now = acked.size();
        await().atMost(TIMEOUT).pollInSameThread().until(() -> acked.size() >= now + AFTER_COMPLETION
                || producing.isDone());
        assertThat(producing).as("the acks=all producer").isNotDone();
    }

    /**
     * Case 3: {@code kafka-reassign-partitions --execute}, {@code --verify} (still in progress) and {@code --cancel}
     * of a reassignment whose new replicas cannot fetch from the leader; then the same reassignment with Admin.
     */
    private static void cancelRevertsToTheOriginalReplicas(BrokerCluster cluster, Admin admin, FaultProxy leaderProxy)
            throws Exception {
        long begin = System.nanoTime();
        String topic = ReplicationClients.uniqueName("cancelled");
        TopicPartition tp = new TopicPartition(topic, 0);
        create(admin, topic, Map.of(0, List.of(1)));
        List<String> before = produce(cluster, topic, 0, RECORDS_PER_PARTITION);
        Path plan = write(Files.createTempDirectory(tmp, "reassign").resolve("plan.json"), "{\"version\":1,\"partitions\":"
                + "[{\"topic\":\"" + topic + "\",\"partition\":0,\"replicas\":[2,3]}]}");
        leaderProxy.partition();
        JavaTool.Result executed = tool(cluster, "--execute", "--reassignment-json-file", plan.toString());
        await().atMost(TIMEOUT).pollInSameThread().ignoreExceptions().untilAsserted(() -> {
            assertThat(logDirs(cluster, 2, topic)).containsExactly(topic + "-0");
            assertThat(logDirs(cluster, 3, topic)).containsExactly(topic + "-0");
        });
        PartitionReassignment ongoing = admin.listPartitionReassignments(Set.of(tp)).reassignments()
                .get(30, TimeUnit.SECONDS).get(tp);
        JavaTool.Result verified = tool(cluster, "--verify", "--preserve-throttles", "--reassignment-json-file",
                plan.toString());

        // When: cancelled with the tool (throttles kept: clearing them needs IncrementalAlterConfigs)
        JavaTool.Result cancelled = tool(cluster, "--cancel", "--preserve-throttles", "--reassignment-json-file",
                plan.toString());

        // Then
        assertThat(executed.exitCode()).as(executed.toString()).isZero();
        assertThat(ongoing).isNotNull();
        assertThat(ongoing.replicas()).containsExactly(2, 3, 1);
        assertThat(ongoing.addingReplicas()).containsExactly(2, 3);
        assertThat(ongoing.removingReplicas()).containsExactly(1);
        assertThat(verified.exitCode()).as(verified.toString()).isZero();
        assertThat(verified.stdout()).contains("Reassignment of partition " + tp + " is still in progress.");
        assertThat(cancelled.exitCode()).as(cancelled.toString()).isZero();
        assertThat(cancelled.stdout()).contains("Successfully cancelled partition reassignment for: " + tp);
        await().atMost(TIMEOUT).pollInSameThread().ignoreExceptions().untilAsserted(() -> {
            assertThat(admin.listPartitionReassignments(Set.of(tp)).reassignments().get(10, TimeUnit.SECONDS))
                    .isEmpty();
            TopicPartitionInfo p = ReplicationClients.partitions(admin, topic).get(0);
            assertThat(ids(p.replicas())).containsExactly(1);
            assertThat(ids(p.isr())).containsExactly(1);
            assertThat(p.leader().id()).isEqualTo(1);
        });
        awaitNoLog(cluster, 2, topic, 0);
        awaitNoLog(cluster, 3, topic, 0);
        leaderProxy.heal();
        List<String> after = produce(cluster, topic, 0, 100);
        List<String> all = new ArrayList<>(before);
        all.addAll(after);
        assertThat(consume(cluster, tp, all.size())).containsExactlyElementsOf(all);
        // A fetch held by the partition and answered after the heal brings no log back.
        assertThat(logDirs(cluster, 2, topic)).isEmpty();
        assertThat(logDirs(cluster, 3, topic)).isEmpty();

        // When: tried again with the link healed, onto the brokers that just dropped their logs of it
        admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(2, 3)))))
                .all().get(30, TimeUnit.SECONDS);

        // Then
        await().atMost(TIMEOUT).pollInSameThread().ignoreExceptions().untilAsserted(() -> {
            assertThat(admin.listPartitionReassignments(Set.of(tp)).reassignments().get(10, TimeUnit.SECONDS))
                    .isEmpty();
            TopicPartitionInfo p = ReplicationClients.partitions(admin, topic).get(0);
            assertThat(ids(p.replicas())).containsExactly(2, 3);
            assertThat(ids(p.isr())).containsExactlyInAnyOrder(2, 3);
            assertThat(p.leader().id()).isEqualTo(2);
        });
        assertThat(consume(cluster, tp, all.size())).containsExactlyElementsOf(all);
        awaitNoLog(cluster, 1, topic, 0);
        System.out.printf("%s: the reassignment of %s to [2,3] was cancelled back to [1], then done again, in %d ms%n",
                cluster.kind(), topic, (System.nanoTime() - begin) / 1_000_000);
    }

    /**
     * Case 4: the broker being added is killed (SIGKILL) while it cannot fetch; started again with the link healed,
     * it catches up from what its log holds and the reassignment completes.
     */
    private static void anAddedReplicaKilledBeforeItCaughtUpCompletesAfterItsRestart(BrokerCluster cluster,
            Admin admin, FaultProxy leaderProxy) throws Exception {
        long begin = System.nanoTime();
        String topic = ReplicationClients.uniqueName("restarted");
        TopicPartition tp = new TopicPartition(topic, 0);
        create(admin, topic, Map.of(0, List.of(1)));
        List<String> produced = produce(cluster, topic, 0, RECORDS_PER_PARTITION);
        leaderProxy.partition();
        admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(1, 2)))))
                .all().get(30, TimeUnit.SECONDS);
        await().atMost(TIMEOUT).pollInSameThread().untilAsserted(() -> assertThat(logDirs(cluster, 2, topic))
                .containsExactly(topic + "-0"));

        // When
        cluster.node(2).kill();
        leaderProxy.heal();
        cluster.startNode(cluster.node(2));

        // Then
        await().atMost(TIMEOUT).pollInSameThread().ignoreExceptions().untilAsserted(() -> {
            assertThat(admin.listPartitionReassignments(Set.of(tp)).reassignments().get(10, TimeUnit.SECONDS))
                    .isEmpty();
            TopicPartitionInfo p = ReplicationClients.partitions(admin, topic).get(0);
            assertThat(ids(p.replicas())).containsExactly(1, 2);
            assertThat(ids(p.isr())).containsExactlyInAnyOrder(1, 2);
            assertThat(p.leader().id()).isEqualTo(1);
        });
        assertThat(consume(cluster, tp, produced.size())).containsExactlyElementsOf(produced);
        System.out.printf("%s: the reassignment of %s to [1,2] completed after broker 2 was killed and restarted in "
                + "%d ms%n", cluster.kind(), topic, (System.nanoTime() - begin) / 1_000_000);
    }

    private static void create(Admin admin, String topic, Map<Integer, List<Integer>> assignment) throws Exception {
        admin.createTopics(List.of(new NewTopic(topic, assignment))).all().get(60, TimeUnit.SECONDS);
        ReplicationClients.awaitPartitions(admin, List.of(topic), "its leader",
                p -> p.leader() != null && !p.leader().isEmpty() && p.leader().id() == assignment.get(p.partition())
                        .get(0));
    }

    private static KafkaProducer<String, String> producer(BrokerCluster cluster) {
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 60_000);
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    /** {@code count} records to {@code topic}-{@code partition} with acks=all; their values in offset order. */
    private static List<String> produce(BrokerCluster cluster, String topic, int partition, int count)
            throws Exception {
        List<String> values = new ArrayList<>();
        List<Future<RecordMetadata>> sends = new ArrayList<>();
        try (KafkaProducer<String, String> producer = producer(cluster)) {
            for (int i = 0; i < count; i++) {
                String value = topic + "-" + partition + "-" + System.nanoTime() + "-" + i;
                values.add(value);
                sends.add(producer.send(new ProducerRecord<>(topic, partition, null, value)));
            }
            for (Future<RecordMetadata> send : sends) {
                send.get(60, TimeUnit.SECONDS);
            }
        }
        return values;
    }

    /** acks=all to partition 0, one record in flight at a time, until {@code stop}; adds each acknowledged value. */
    private static void produceUntil(BrokerCluster cluster, String topic, AtomicBoolean stop, List<String> acked) {
        try (KafkaProducer<String, String> producer = producer(cluster)) {
            for (int i = 0; !stop.get(); i++) {
                String value = topic + "-live-" + i;
                producer.send(new ProducerRecord<>(topic, 0, null, value)).get(60, TimeUnit.SECONDS);
                acked.add(value);
            }
        } catch (Exception e) {
            throw new IllegalStateException("acks=all produce to " + topic + " failed after " + acked.size(), e);
        }
    }

    /** The first {@code count} values of {@code tp} read from its leader (fails if fewer come within the timeout). */
    private static List<String> consume(BrokerCluster cluster, TopicPartition tp, int count) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new StringDeserializer())) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (values.size() < count && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                    assertThat(record.offset()).as("offset of %s", record.value()).isEqualTo(values.size());
                    values.add(record.value());
                }
            }
        }
        assertThat(values).as("records of %s", tp).hasSize(count);
        return values;
    }

    /**
     * The throttle configs set dynamically: {@code <broker id>:<rate key>} for each broker's own rates,
     * {@code topic:<key>} for the topic's throttled replicas.
     */
    private static Map<String, String> throttleConfigs(Admin admin, String topic) throws Exception {
        List<ConfigResource> resources = new ArrayList<>();
        for (int id = 1; id <= ReplicationClients.NODES; id++) {
            resources.add(new ConfigResource(ConfigResource.Type.BROKER, Integer.toString(id)));
        }
        resources.add(new ConfigResource(ConfigResource.Type.TOPIC, topic));
        Map<String, String> found = new HashMap<>();
        admin.describeConfigs(resources).all().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS).forEach((r, config) ->
                config.entries().forEach(e -> {
                    boolean dynamic = e.source() == ConfigEntry.ConfigSource.DYNAMIC_BROKER_CONFIG
                            || e.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG;
                    if (dynamic && e.name().contains(".replication.throttled.") && !e.value().isEmpty()) {
                        found.put((r.type() == ConfigResource.Type.TOPIC ? "topic" : r.name()) + ":" + e.name(),
                                e.value());
                    }
                }));
        return found;
    }

    private static JavaTool.Result tool(BrokerCluster cluster, String... args) {
        List<String> all = new ArrayList<>(List.of("--bootstrap-server", cluster.bootstrapServers()));
        all.addAll(List.of(args));
        return KafkaDistribution.tool(TOOL).args(all).timeout(TIMEOUT).build().run();
    }

    private static Map<Integer, List<Integer>> proposedReplicas(String json) {
        Map<Integer, List<Integer>> proposed = new HashMap<>();
        Matcher matcher = PROPOSED.matcher(json);
        while (matcher.find()) {
            proposed.put(Integer.parseInt(matcher.group(1)), Stream.of(matcher.group(2).split(","))
                    .map(Integer::parseInt).toList());
        }
        return proposed;
    }

    /** The directories of {@code topic}'s partitions in node {@code nodeId}'s log directory, renamed ones too. */
    private static List<String> logDirs(BrokerCluster cluster, int nodeId, String topic) {
        try (Stream<Path> dirs = Files.list(cluster.node(nodeId).dataDir())) {
            return dirs.map(dir -> dir.getFileName().toString()).filter(name -> name.startsWith(topic + "-"))
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Waits until node {@code nodeId} holds no directory of the partition, not even one renamed for deletion. */
    private static void awaitNoLog(BrokerCluster cluster, int nodeId, String topic, int partition) {
        String name = topic + "-" + partition;
        await().atMost(TIMEOUT).pollInSameThread().untilAsserted(() -> assertThat(logDirs(cluster, nodeId, topic))
                .as("logs of %s on broker %d", name, nodeId)
                .noneMatch(dir -> dir.equals(name) || dir.startsWith(name + ".")));
    }

    private static Path write(Path file, String text) throws IOException {
        return Files.writeString(file, text);
    }

    private static List<Integer> ids(List<Node> nodes) {
        return nodes.stream().map(Node::id).toList();
    }

    private static Map<String, String> listeners(ClusterNode node, int replicationPort, int proxyPort) {
        Map<String, String> config = new HashMap<>();
        config.put("listeners", "PLAINTEXT://" + HOST + ":" + node.clientPort() + ",REPLICATION://" + HOST + ":"
                + replicationPort + ",CONTROLLER://" + HOST + ":" + node.controllerPort());
        config.put("advertised.listeners", "PLAINTEXT://" + HOST + ":" + node.clientPort() + ",REPLICATION://"
                + HOST + ":" + proxyPort);
        config.put("inter.broker.listener.name", "REPLICATION");
        config.put("listener.security.protocol.map", "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,REPLICATION:PLAINTEXT");
        return config;
    }
}
