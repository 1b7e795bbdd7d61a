package io.cairn.compat.share;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.BrokerSessions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A share group's acknowledgements through SIGKILLs, as a stock {@code KafkaShareConsumer} in explicit mode sees them:
 * it accepts every record it receives (a millisecond of work each) and commits every 100, while a broker is killed and
 * started again twice in the middle of the stream: the only broker, or on 3 nodes the group's coordinator and then the
 * leader of a partition. Every record is delivered; no record whose acceptance {@code commitSync} reported as done is
 * ever delivered again (a committed acknowledgement is the share-partition's persisted state: the share coordinator
 * wrote it before the broker answered); and after one more kill a new member of the group receives only records
 * whose commit had failed (left available, as their acceptance was not applied), accepts them, and then receives
 * nothing. Both kinds: Kafka 4.1.1 answers the same.
 */
@Timeout(300)
@ExtendWith(BrokerLogsExtension.class)
@Tag("faults")
class ShareCrashIT {

    private static final String TOPIC = "share-crash";
    private static final String GROUP = "share-crash-group";
    private static final int PARTITIONS = 3;
    private static final int RECORDS = 3_000;
    private static final int KILLS = 2;
    private static final int COMMIT_EVERY = 100;
    private static final long STREAM_TIMEOUT_MS = 150_000;
    /** The group's acquisition lock ({@code share.record.lock.duration.ms}: the brokers' minimum, 15 s). */
    private static final int LOCK_MS = 15_000;
    /**
     * How long the new member after the stream must receive nothing before it is done: longer than the lock, so that
     * a record some earlier acquisition still held has come back by then.
     */
    private static final long SETTLED_QUIET_MS = LOCK_MS + 3_000;

    @ParameterizedTest
    @MethodSource("io.cairn.compat.txn.TransactionsIT#kinds")
    void acceptedRecordsStayAcceptedAndNoRecordIsLostThroughKills(BrokerKind kind) throws Exception {
        try (BrokerProcess broker = ShareConsumerIT.start(kind)) {
            String bootstrap = broker.bootstrapServers();
            Runnable bounce = () -> {
                broker.kill();
                broker.start();
            };
            Set<String> unsettled = streamThroughKills(kind, bootstrap, i -> bounce.run());

            // and after one more kill a new member of the group receives only records whose commit had failed
            bounce.run();
            settleWithANewMember(bootstrap, unsettled);
            assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
        }
    }

    /**
     * The same on a 3-node cluster ({@code __share_group_state}, {@code __consumer_offsets} and the topic at
     * replication factor 3, min.insync.replicas 2): the first kill takes the group's coordinator, the second the
     * leader of the topic's partition 0, so the share-partitions move to a leader that loads their state from the
     * replicated share state.
     */
    @ParameterizedTest
    @MethodSource("io.cairn.compat.txn.TransactionsIT#kinds")
    void acceptedRecordsStayAcceptedAndNoRecordIsLostThroughKillsOfCoordinatorAndLeader(BrokerKind kind)
            throws Exception {
        Map<String, String> config = BrokerSessions.quick(Map.of("group.share.enable", "true",
                "offsets.topic.replication.factor", "3",
                "share.coordinator.state.topic.num.partitions", "3",
                "min.insync.replicas", "2"));
        try (BrokerCluster cluster = BrokerCluster.create(kind, 3, config)) {
            cluster.start();
            String bootstrap = cluster.bootstrapServers();
            Set<String> unsettled = streamThroughKills(kind, bootstrap, i -> {
                BrokerProcess node = cluster.node(i == 0 ? groupCoordinator(bootstrap)
                        : leaderOfPartition0(bootstrap));
                node.kill();
                cluster.startNode(node);
            });

            BrokerProcess coordinator = cluster.node(groupCoordinator(bootstrap));
            coordinator.kill();
            cluster.startNode(coordinator);
            settleWithANewMember(bootstrap, unsettled);
            for (BrokerProcess node : cluster.nodes()) {
                assertThat(node.logLinesContaining("LEAK:")).isEmpty();
            }
        }
    }

    /**
     * A new member of the group receives only {@code unsettled} records (a record it receives was left available: its
     * acceptance had not been applied), accepts and commits them, and then receives nothing more for longer than the
     * lock: no record is left behind an acquisition that never ends.
     */
    private static void settleWithANewMember(String bootstrap, Set<String> unsettled) {
        try (KafkaShareConsumer<String, String> late = consumer(bootstrap)) {
            late.subscribe(List.of(TOPIC));
            List<String> received = new ArrayList<>();
            long quietSince = System.currentTimeMillis();
            long until = quietSince + 90_000;
            while (System.currentTimeMillis() - quietSince < SETTLED_QUIET_MS
                    && System.currentTimeMillis() < until) {
                for (ConsumerRecord<String, String> record : late.poll(Duration.ofMillis(300))) {
                    received.add(record.value());
                    late.acknowledge(record, AcknowledgeType.ACCEPT);
                    quietSince = System.currentTimeMillis();
                }
                late.commitSync(Duration.ofSeconds(10)).forEach((partition, error) -> assertThat(error)
                        .as("the new member's commit of %s", partition).isEmpty());
            }
            assertThat(received).as("records a new member receives after the stream")
                    .doesNotHaveDuplicates().allMatch(unsettled::contains);
            System.out.printf("a new member received %d of the %d unsettled records%n", received.size(),
                    unsettled.size());
        }
    }

    /**
     * Creates the topic (replication factor as many as the nodes bootstrap names), produces its records, and has a
     * member accept what it receives and commit every 100 records while {@code kill} runs at a fifth and at three
     * fifths of the records committed, until every record is committed or unsettled (its commit failed and it was
     * not committed later: a failed or timed-out commit may still have been applied, as in Kafka, where a
     * share-partition leader whose write of the state outlives the client's wait completes it). Asserts that the
     * kills fell in the middle of the stream, and that no record was delivered again after its acceptance was
     * committed. Returns the unsettled records.
     */
    private static Set<String> streamThroughKills(BrokerKind kind, String bootstrap, IntConsumer kill)
            throws Exception {
        // Given: a topic of 3,000 records and a share group that starts at the log start, with a 15 s lock
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            short replicas = (short) bootstrap.split(",").length;
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, replicas))).all().get(30, TimeUnit.SECONDS);
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, GROUP),
                    List.of(new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"),
                                    AlterConfigOp.OpType.SET),
                            new AlterConfigOp(new ConfigEntry("share.record.lock.duration.ms",
                                    Integer.toString(LOCK_MS)), AlterConfigOp.OpType.SET))))
                    .all().get(30, TimeUnit.SECONDS);
        }
        Set<String> produced = produce(bootstrap);

        // When: a member accepts what it receives and commits every 100 records, while the kills happen
        Map<String, Integer> deliveries = new HashMap<>();
        Set<String> committed = ConcurrentHashMap.newKeySet();
        Set<String> unsettled = new HashSet<>();
        List<String> deliveredAfterCommit = new ArrayList<>();
        CompletableFuture<List<Integer>> kills = CompletableFuture.supplyAsync(() -> killDuring(kill, committed));
        try (KafkaShareConsumer<String, String> consumer = consumer(bootstrap)) {
            consumer.subscribe(List.of(TOPIC));
            long until = System.currentTimeMillis() + STREAM_TIMEOUT_MS;
            while ((committed.size() + unsettled.size() < produced.size() || !kills.isDone())
                    && System.currentTimeMillis() < until) {
                Map<Integer, List<String>> accepted = new HashMap<>();
                int pending = 0;
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    deliveries.merge(record.value(), 1, Integer::sum);
                    if (committed.contains(record.value())) {
                        deliveredAfterCommit.add(record.value() + " (delivery " + record.deliveryCount()
                                .orElse((short) -1) + ")");
                    }
                    consumer.acknowledge(record, AcknowledgeType.ACCEPT);
                    accepted.computeIfAbsent(record.partition(), p -> new ArrayList<>()).add(record.value());
                    // (a millisecond of work per record and a commit every 100, so that the kills land in the
                    // middle of a poll's records: some of them committed, some acknowledged, some not yet)
                    Thread.sleep(1);
                    if (++pending == COMMIT_EVERY) {
                        commit(consumer, accepted, committed, unsettled);
                        accepted.clear();
                        pending = 0;
                    }
                }
                if (pending > 0) {
                    commit(consumer, accepted, committed, unsettled);
                }
            }
        }
        List<Integer> committedAtKills = kills.get(60, TimeUnit.SECONDS);

        // Then: the kills fell in the middle of the stream, every record was delivered, and none was delivered
        // again after its acceptance was committed
        assertThat(committedAtKills).as("records committed at each kill, in the middle of the stream").hasSize(KILLS)
                .allMatch(n -> n < RECORDS);
        assertThat(deliveries.keySet()).as("the records delivered").containsAll(produced);
        assertThat(deliveredAfterCommit).as("records delivered again after their acceptance was committed")
                .isEmpty();
        System.out.printf("%s: %d records, %d deliveries, %d redelivered, %d committed, %d unsettled%n", kind,
                RECORDS, deliveries.values().stream().mapToInt(Integer::intValue).sum(),
                deliveries.values().stream().filter(n -> n > 1).count(), committed.size(), unsettled.size());
        return Set.copyOf(unsettled);
    }

    private static int groupCoordinator(String bootstrap) {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            return admin.describeShareGroups(List.of(GROUP)).describedGroups().get(GROUP).get(30, TimeUnit.SECONDS)
                    .coordinator().id();
        } catch (Exception e) {
            throw new AssertionError("the share group's coordinator", e);
        }
    }

    private static int leaderOfPartition0(String bootstrap) {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            return admin.describeTopics(List.of(TOPIC)).allTopicNames().get(30, TimeUnit.SECONDS).get(TOPIC)
                    .partitions().get(0).leader().id();
        } catch (Exception e) {
            throw new AssertionError("the leader of " + TOPIC + "-0", e);
        }
    }

    /**
     * Commits the acknowledgements made since the last commit ({@code accepted}, by partition): the values of each
     * partition whose commit succeeded move to {@code committed}; those of a failed one (the broker is down, the
     * leader moved, the wait ran out) to {@code unsettled}.
     */
    private static void commit(KafkaShareConsumer<String, String> consumer, Map<Integer, List<String>> accepted,
                               Set<String> committed, Set<String> unsettled) {
        Map<TopicIdPartition, Optional<KafkaException>> results;
        try {
            results = consumer.commitSync(Duration.ofSeconds(10));
        } catch (KafkaException e) {
            accepted.values().forEach(unsettled::addAll);
            return;
        }
        for (Map.Entry<Integer, List<String>> partition : accepted.entrySet()) {
            boolean done = results.entrySet().stream().anyMatch(r -> r.getKey().partition() == partition.getKey()
                    && r.getValue().isEmpty());
            if (done) {
                committed.addAll(partition.getValue());
                unsettled.removeAll(partition.getValue());
            } else {
                unsettled.addAll(partition.getValue());
            }
        }
    }

    /**
     * Runs {@code kill} (with its index) once a fifth of the records is committed and again at three fifths (with
     * 3 partitions of 1,000 records, in the middle of a partition: a poll's records are not all committed yet); how
     * many records were committed when each kill began.
     */
    private static List<Integer> killDuring(IntConsumer kill, Set<String> committed) {
        List<Integer> committedAtKills = new ArrayList<>();
        long until = System.currentTimeMillis() + STREAM_TIMEOUT_MS;
        while (committedAtKills.size() < KILLS && System.currentTimeMillis() < until) {
            int done = committedAtKills.size();
            int now = committed.size();
            if (now >= (long) RECORDS * (2 * done + 1) / (2 * KILLS + 1)) {
                committedAtKills.add(now);
                kill.accept(done);
            } else {
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        return committedAtKills;
    }

    private static Set<String> produce(String bootstrap) throws Exception {
        Set<String> values = new HashSet<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class))) {
            List<Future<?>> sent = new ArrayList<>();
            for (int i = 0; i < RECORDS; i++) {
                String value = "r-" + i;
                values.add(value);
                sent.add(producer.send(new ProducerRecord<>(TOPIC, i % PARTITIONS, null, value)));
            }
            for (Future<?> f : sent) {
                f.get(30, TimeUnit.SECONDS);
            }
        }
        return values;
    }

    private static KafkaShareConsumer<String, String> consumer(String bootstrap) {
        return new KafkaShareConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.GROUP_ID_CONFIG, GROUP,
                ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit",
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class));
    }
}
