package io.cairn.compat.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Power cuts on a 3-node cluster, one after the other: two topics of 3 partitions at replication factor 3 and
 * {@code min.insync.replicas=2} with 1 MiB segments, one plain and one with {@code flush.messages=1}, and an idempotent
 * acks=all stock producer writing 1 KiB records round each. In its default mode neither broker fsyncs a log before
 * it rolls a segment, so a power cut may take any part of the active segment's tail; with {@code flush.messages=1}
 * each append is fsynced before it returns, on the leader before it acknowledges and on a follower before its next
 * fetch reports it, so only what follows the last acknowledged offset can go. The scenario kills the nodes (SIGKILL)
 * and then does to each active segment of both topics what a lost page cache can leave, from a random byte of the
 * second half of its batches (and past the last acknowledged one, with fsyncs) on, often inside a batch: the file cut
 * there, or the rest zeroed (the size was written, the data was not), or the rest overwritten with random bytes.
 * Indexes and checkpoint files are left as they were ({@code -Dcairn.faults.seed} repeats the cuts).
 *
 * <ol>
 *   <li>One node (the leader of the plain topic's partition 0), restarted at once, so before the controller would
 *   have fenced it: it must recover its log, leave the ISRs (it registers after an unclean shutdown) and catch up.</li>
 *   <li>Two nodes (the active controller and that leader among them when they differ), restarted one after the
 *   other: the survivor holds every acknowledged record, and neither node that lost its tail may lead before it has
 *   caught up again.</li>
 *   <li>Every node at once: the plain topic may lose acknowledged records (with no fsync, replication is the only
 *   copy, and every copy lost its tail), but must come back consistent; the fsynced topic loses none.</li>
 * </ol>
 * After each: every partition is led again with a full ISR and takes writes; a consumer reads only records the
 * producer sent, none twice, each partition's in the order sent, and every acknowledged record at its offset unless
 * every node lost the plain topic's tail; and every replica of a partition holds the same batches (offsets, leader
 * epoch, CRC) up to the end the consumer read. It prints the cuts and the records lost.
 */
@Timeout(900)
@ExtendWith(BrokerLogsExtension.class)
@Tag("faults")
class PowerLossIT {

    private static final int PARTITIONS = 3;
    private static final int MIN_ISR = 2;
    private static final Duration TIMEOUT = Duration.ofSeconds(120);
    /** The least either broker takes, about 1,000 records: the cut is in the active segment, behind a rolled one. */
    private static final int SEGMENT_BYTES = 1024 * 1024;

    /** Which nodes lose power, in the order the scenario cuts them. */
    enum Victims {
        /** The leader of partition 0 of the plain topic. */
        ONE,
        /** Two nodes, the survivor being neither that leader nor the active controller if it can. */
        TWO,
        /** All three. */
        EVERY
    }

    static Stream<BrokerKind> kinds() {
        return ReplicationClients.kinds();
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void everyReplicaComesBackConsistentFromPowerCutsOfOneTwoAndEveryNode(BrokerKind kind) throws Exception {
        long seed = Long.getLong("cairn.faults.seed", System.nanoTime());
        Random random = new Random(seed);
        try (BrokerCluster cluster = BrokerCluster.create(kind, ReplicationClients.NODES,
                ReplicationClients.clusterConfig()); Admin admin = ReplicationClients.startAndConnect(cluster)) {
            String plain = ReplicationClients.uniqueName("power");
            String durable = ReplicationClients.uniqueName("power-durable");
            createTopic(admin, plain, Map.of());
            createTopic(admin, durable, Map.of("flush.messages", "1"));
            List<String> report = new ArrayList<>();
            try (AckedWriter plainWriter = new AckedWriter(cluster, plain, PARTITIONS, "all", true);
                 AckedWriter durableWriter = new AckedWriter(cluster, durable, PARTITIONS, "all", true)) {
                awaitAcked(plainWriter, 4_500);
                awaitAcked(durableWriter, 4_500);
                for (Victims phase : Victims.values()) {
                    // When: the power goes off on these nodes, and their page caches are lost
                    List<Integer> victims = victims(cluster, admin, plain, phase);
                    long killed = System.nanoTime();
                    victims.forEach(id -> cluster.node(id).kill());
                    Set<Integer> plainAckedBeforeCut = Set.copyOf(plainWriter.ackedSequences());
                    Map<String, Long> durableSynced = new HashMap<>();
                    durableWriter.acked().forEach((tp, byOffset) -> durableSynced.put(tp.toString(),
                            byOffset.isEmpty() ? 0L : byOffset.lastKey() + 1));
                    List<String> cuts = new ArrayList<>();
                    for (int id : victims) {
                        cuts.addAll(PowerCut.loseUnsyncedTails(cluster.node(id).dataDir(),
                                t -> t.equals(plain) || t.equals(durable),
                                dir -> durableSynced.getOrDefault(dir, 0L), id, random));
                    }
                    if (phase == Victims.EVERY) {
                        cluster.start();
                    } else {
                        // One at a time: with the survivor, each makes a quorum of the controllers
                        victims.forEach(id -> cluster.startNode(cluster.node(id)));
                    }

                    // Then: every partition is led, its ISR full again, and writes go on
                    ReplicationClients.awaitPartitions(admin, List.of(plain, durable), "a leader and a full ISR",
                            p -> p.leader() != null && !p.leader().isEmpty()
                                    && p.isr().size() == p.replicas().size(), TIMEOUT);
                    long recovered = System.nanoTime();
                    int plainTarget = plainWriter.ackedCount() + 2_000;
                    int durableTarget = durableWriter.ackedCount() + 2_000;
                    awaitAcked(plainWriter, plainTarget);
                    awaitAcked(durableWriter, durableTarget);
                    long writing = System.nanoTime();

                    // Then: the replicas agree, and a consumer reads what was acknowledged (all of it while a node
                    // survived or fsyncs, else what the cluster kept), only once and in order
                    long lost = assertConsistent(cluster, plain, plainWriter, phase != Victims.EVERY,
                            plainAckedBeforeCut);
                    assertConsistent(cluster, durable, durableWriter, true, Set.of());
                    if (phase != Victims.EVERY) {
                        assertThat(plainWriter.failure()).as("a record the plain topic's producer gave up on, %s",
                                phase).isNull();
                    }
                    report.add(phase + " (nodes " + victims + ": " + String.join(", ", cuts) + "): full ISRs "
                            + millis(recovered - killed) + " ms after the kill, 2,000 more acknowledgements on each in "
                            + millis(writing - recovered) + " ms, checked in " + millis(System.nanoTime() - writing)
                            + " ms; " + lost + " of the plain topic's " + plainAckedBeforeCut.size()
                            + " acknowledged records lost");
                }
                assertThat(durableWriter.failure()).as("a record the durable topic's producer gave up on").isNull();
                System.out.printf("%s power cuts (seed %d): %s; plain topic's producer's first failure: %s%n", kind,
                        seed, String.join("; ", report), plainWriter.failure());
            }
        }
    }

    private static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    private static void createTopic(Admin admin, String topic, Map<String, String> extra) throws Exception {
        Map<String, String> configs = new HashMap<>(extra);
        configs.put("min.insync.replicas", Integer.toString(MIN_ISR));
        configs.put("segment.bytes", Integer.toString(SEGMENT_BYTES));
        admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, ReplicationClients.REPLICAS).configs(configs)))
                .all().get(60, TimeUnit.SECONDS);
        ReplicationClients.awaitFullIsr(admin, List.of(topic));
    }

    /**
     * Reads {@code topic} to its end offsets now: only values {@code writer} sent, none twice, each partition's in
     * the order sent, and (when {@code keepsAcked}) every acknowledged record below the end at its offset; then every
     * replica's log holds the same batches below that end (the writers go on: a batch that is not whole yet starts
     * above it). Returns how many of {@code ackedBeforeCut} were not read.
     */
    private static long assertConsistent(BrokerCluster cluster, String topic, AckedWriter writer, boolean keepsAcked,
                                         Set<Integer> ackedBeforeCut) throws IOException {
        Map<TopicPartition, TreeMap<Long, String>> read = readAll(cluster, topic);
        Set<String> readValues = new HashSet<>();
        Set<Integer> readSequences = new HashSet<>();
        for (Map.Entry<TopicPartition, TreeMap<Long, String>> partition : read.entrySet()) {
            TopicPartition tp = partition.getKey();
            List<Integer> sequences = new ArrayList<>();
            for (String value : partition.getValue().values()) {
                assertThat(value).as("%s: a value the producer sent", tp).startsWith("acks-all-");
                assertThat(readValues.add(value)).as("%s: read twice: %s", tp, value.substring(0, 18)).isTrue();
                sequences.add(Integer.parseInt(value.substring(9, 18)));
            }
            assertThat(sequences).as("%s: in the order sent", tp).isSorted();
            readSequences.addAll(sequences);
            long end = partition.getValue().isEmpty() ? 0L : partition.getValue().lastKey() + 1;
            if (keepsAcked) {
                writer.acked().get(tp).headMap(end).forEach((offset, value) -> assertThat(partition.getValue()
                        .get(offset)).as("%s offset %d: the acknowledged record", tp, offset).isEqualTo(value));
            }
            Map<Integer, List<String>> byNode = new TreeMap<>();
            for (int id = 1; id <= ReplicationClients.NODES; id++) {
                Path partitionDir = cluster.node(id).dataDir().resolve(topic + "-" + tp.partition());
                byNode.put(id, PowerCut.batchesBelow(partitionDir, end));
            }
            assertThat(byNode.values().stream().distinct().count())
                    .as("%s below offset %d: the replicas' batches %s", tp, end, byNode).isEqualTo(1L);
            assertThat(byNode.get(1)).as("%s: batches up to its end", tp).isNotEmpty();
        }
        return ackedBeforeCut.stream().filter(sequence -> !readSequences.contains(sequence)).count();
    }

    private static List<Integer> victims(BrokerCluster cluster, Admin admin, String topic, Victims victims)
            throws Exception {
        int leader = ReplicationClients.leader(admin, topic, 0);
        return switch (victims) {
            case ONE -> List.of(leader);
            case EVERY -> IntStream.rangeClosed(1, ReplicationClients.NODES).boxed().toList();
            case TWO -> {
                int controller = cluster.activeControllerId(ReplicationClients.STATE_TIMEOUT);
                int survivor = IntStream.rangeClosed(1, ReplicationClients.NODES)
                        .filter(id -> id != leader && id != controller).findFirst()
                        .orElse(leader % ReplicationClients.NODES + 1);
                yield IntStream.rangeClosed(1, ReplicationClients.NODES).filter(id -> id != survivor).boxed()
                        .toList();
            }
        };
    }

    private static void awaitAcked(AckedWriter writer, int count) {
        await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(100)).until(() -> writer.ackedCount() >= count);
    }

    /** Reads every partition of {@code topic} from its start to its end offset now, by offset. */
    private static Map<TopicPartition, TreeMap<Long, String>> readAll(BrokerCluster cluster, String topic) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10_000);
        Map<TopicPartition, TreeMap<Long, String>> read = new HashMap<>();
        List<TopicPartition> partitions = IntStream.range(0, PARTITIONS).mapToObj(p -> new TopicPartition(topic, p))
                .toList();
        partitions.forEach(tp -> read.put(tp, new TreeMap<>()));
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new StringDeserializer())) {
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, Duration.ofSeconds(30));
            await().atMost(TIMEOUT).pollInSameThread().pollDelay(Duration.ZERO).until(() -> {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    TreeMap<Long, String> byOffset = read.get(new TopicPartition(record.topic(), record.partition()));
                    assertThat(byOffset.isEmpty() || record.offset() > byOffset.lastKey())
                            .as("%s-%d offset %d after the last one read", record.topic(), record.partition(),
                                    record.offset()).isTrue();
                    byOffset.put(record.offset(), record.value());
                }
                return partitions.stream().allMatch(tp -> consumer.position(tp) >= ends.get(tp));
            });
        }
        return read;
    }
}
