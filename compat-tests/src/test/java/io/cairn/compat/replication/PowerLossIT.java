package io.cairn.compat.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
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
import java.util.concurrent.ConcurrentSkipListMap;
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
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Power cuts on a 3-node cluster: a topic of 3 partitions at replication factor 3 and {@code min.insync.replicas=2}
 * with 1 MiB segments, an idempotent acks=all stock producer writing 1 KiB records round it. Neither broker fsyncs a
 * log before it rolls a segment in its default mode, so a power cut may take any part of the active segment's tail:
 * the scenario kills the node (SIGKILL) and then does to each of the topic's active segments what a lost page cache
 * can leave, from a random byte of the second half of its batches on, often inside a batch: the file cut there, or
 * the rest zeroed (the size was written, the data was not), or the rest overwritten with random bytes. Indexes and
 * checkpoint files are left as they were ({@code -Dcairn.faults.seed} repeats the cuts).
 *
 * <ul>
 *   <li>One node (the leader of partition 0), restarted at once, so before the controller would have fenced it: it
 *   must recover its log, leave the ISRs (it registers after an unclean shutdown) and catch up.</li>
 *   <li>Two nodes (the active controller and the leader of partition 0 among them when they differ), restarted one
 *   after the other: the survivor holds every acknowledged record, and neither node that lost its tail may lead
 *   before it has caught up again.</li>
 *   <li>Every node at once: acknowledged records may be lost (with no fsync, replication is the only copy, and every
 *   copy lost its tail), but the cluster must come back to a consistent state.</li>
 * </ul>
 * Then every partition is led again with a full ISR and takes writes; a consumer reads only records the producer
 * sent, none twice, each partition's in the order sent; with a survivor, every acknowledged record at its offset.
 * After a clean stop, every replica of a partition holds the same batches (offsets, leader epoch, CRC) up to the end
 * the consumer read. It prints the cuts and the records lost.
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

    /** Which nodes lose power. */
    enum Victims {
        /** The leader of partition 0. */
        ONE,
        /** Two nodes, the survivor being neither the leader of partition 0 nor the active controller if it can. */
        TWO,
        /** All three. */
        EVERY
    }

    static Stream<Arguments> cases() {
        return ReplicationClients.kinds().flatMap(kind -> Stream.of(Victims.values())
                .map(victims -> Arguments.of(kind, victims)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void aClusterComesBackConsistentFromPowerCuts(BrokerKind kind, Victims victimCount) throws Exception {
        long seed = Long.getLong("cairn.faults.seed", System.nanoTime());
        Random random = new Random(seed);
        boolean everyNode = victimCount == Victims.EVERY;
        try (BrokerCluster cluster = BrokerCluster.create(kind, ReplicationClients.NODES,
                ReplicationClients.clusterConfig()); Admin admin = ReplicationClients.startAndConnect(cluster)) {
            String topic = ReplicationClients.uniqueName("power");
            admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, ReplicationClients.REPLICAS).configs(Map.of(
                    "min.insync.replicas", Integer.toString(MIN_ISR), "segment.bytes", Integer.toString(SEGMENT_BYTES)))))
                    .all().get(60, TimeUnit.SECONDS);
            ReplicationClients.awaitFullIsr(admin, List.of(topic));
            List<String> cuts = new ArrayList<>();
            Map<TopicPartition, ConcurrentSkipListMap<Long, String>> acked;
            Set<Integer> ackedSequences;
            int ackedBeforeCut;
            Exception sendFailure;
            try (AckedWriter writer = new AckedWriter(cluster, topic, PARTITIONS, "all", true)) {
                awaitAcked(writer, 4_500);

                // When: the power goes off on one node or on all of them, and their page caches are lost
                List<Integer> victims = victims(cluster, admin, topic, victimCount);
                victims.forEach(id -> cluster.node(id).kill());
                ackedBeforeCut = writer.ackedCount();
                for (int id : victims) {
                    cuts.addAll(loseUnsyncedTails(cluster.node(id).dataDir(), topic, id, random));
                }
                if (everyNode) {
                    cluster.start();
                } else {
                    // One at a time: with the survivor, each makes a quorum of the controllers
                    victims.forEach(id -> cluster.startNode(cluster.node(id)));
                }

                // Then: every partition is led, its ISR full again, and writes go on
                ReplicationClients.awaitPartitions(admin, List.of(topic), "a leader and a full ISR",
                        p -> p.leader() != null && !p.leader().isEmpty() && p.isr().size() == p.replicas().size(),
                        TIMEOUT);
                awaitAcked(writer, writer.ackedCount() + 3_000);
                writer.stop();
                acked = writer.acked();
                ackedSequences = writer.ackedSequences();
                sendFailure = writer.failure();
            }

            // Then: what a consumer reads
            Map<TopicPartition, TreeMap<Long, String>> read = readAll(cluster, topic);
            Set<String> readValues = new HashSet<>();
            Set<Integer> readSequences = new HashSet<>();
            for (TopicPartition tp : read.keySet()) {
                List<Long> sequences = new ArrayList<>();
                for (String value : read.get(tp).values()) {
                    assertThat(value).as("%s: a value the producer sent", tp).startsWith("acks-all-");
                    assertThat(readValues.add(value)).as("%s: read twice: %s", tp, value.substring(0, 18)).isTrue();
                    sequences.add(Long.parseLong(value.substring(9, 18)));
                    readSequences.add(Integer.parseInt(value.substring(9, 18)));
                }
                assertThat(sequences).as("%s: in the order sent", tp).isSorted();
            }
            long lost = ackedSequences.stream().filter(sequence -> !readSequences.contains(sequence)).count();
            if (!everyNode) {
                acked.forEach((tp, byOffset) -> byOffset.forEach((offset, value) -> assertThat(read.get(tp)
                        .get(offset)).as("%s offset %d: the acknowledged record", tp, offset).isEqualTo(value)));
                assertThat(lost).as("acknowledged records lost").isZero();
                assertThat(sendFailure).as("a record the idempotent producer gave up on").isNull();
            }

            // Then: after a clean stop, the replicas of each partition hold the same batches up to the high watermark
            Map<TopicPartition, Long> ends = new HashMap<>();
            read.forEach((tp, records) -> ends.put(tp, records.isEmpty() ? 0L : records.lastKey() + 1));
            cluster.stop();
            for (int p = 0; p < PARTITIONS; p++) {
                long end = ends.get(new TopicPartition(topic, p));
                Map<Integer, List<String>> byNode = new TreeMap<>();
                for (int id = 1; id <= ReplicationClients.NODES; id++) {
                    byNode.put(id, batchesBelow(cluster.node(id).dataDir().resolve(topic + "-" + p), end));
                }
                assertThat(byNode.values().stream().distinct().count())
                        .as("partition %d below offset %d: the replicas' batches %s", p, end, byNode).isEqualTo(1L);
                assertThat(byNode.get(1)).as("partition %d: batches up to its end", p).isNotEmpty();
            }
            System.out.printf("%s power cut of %s (seed %d): %s; %d records acknowledged before the cut, %d in all, "
                            + "%d of them lost; send failure: %s%n", kind, victimCount,
                    seed, String.join("; ", cuts), ackedBeforeCut,
                    ackedSequences.size(), lost, sendFailure);
        }
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

    /**
     * Does to the last segment of each of {@code topic}'s partitions in {@code dataDir} what a lost page cache can:
     * from a random byte of the second half of its batches on, the file is cut, zeroed or garbled.
     */
    private static List<String> loseUnsyncedTails(Path dataDir, String topic, int nodeId, Random random)
            throws IOException {
        List<String> cuts = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
            Path dir = dataDir.resolve(topic + "-" + p);
            List<Path> segments;
            try (Stream<Path> files = Files.list(dir)) {
                segments = files.filter(f -> f.getFileName().toString().endsWith(".log")).sorted().toList();
            }
            Path last = segments.get(segments.size() - 1);
            long end = batchesEnd(last);
            long cut = end / 2 + (long) (random.nextDouble() * (end - end / 2));
            int how = random.nextInt(3);
            try (FileChannel ch = FileChannel.open(last, StandardOpenOption.WRITE)) {
                if (how == 0) {
                    ch.truncate(cut);
                } else {
                    byte[] rest = new byte[(int) (end - cut)];
                    if (how == 2) {
                        random.nextBytes(rest);
                    }
                    ch.write(ByteBuffer.wrap(rest), cut);
                }
            }
            cuts.add("node " + nodeId + " partition " + p + " " + new String[] {"cut", "zeroed", "garbled"}[how]
                    + " at byte " + cut + " of " + end);
        }
        return cuts;
    }

    /** The byte after the last whole batch of a segment file (Kafka's format: offset, then length). */
    private static long batchesEnd(Path segment) throws IOException {
        try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.READ)) {
            long size = ch.size();
            long position = 0;
            ByteBuffer header = ByteBuffer.allocate(12);
            while (position + 12 <= size) {
                header.clear();
                ch.read(header, position);
                int length = header.getInt(8);
                if (length <= 0 || position + 12 + length > size) {
                    break;
                }
                position += 12 + length;
            }
            return position;
        }
    }

    /** {@code base-last@leaderEpoch:crc} of each batch of a partition's log whose base offset is below {@code end}. */
    private static List<String> batchesBelow(Path dir, long end) throws IOException {
        List<Path> segments;
        try (Stream<Path> files = Files.list(dir)) {
            segments = files.filter(f -> f.getFileName().toString().endsWith(".log")).sorted().toList();
        }
        List<String> batches = new ArrayList<>();
        for (Path segment : segments) {
            try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.READ)) {
                long size = ch.size();
                long position = 0;
                ByteBuffer header = ByteBuffer.allocate(27);
                while (position + 27 <= size) {
                    header.clear();
                    ch.read(header, position);
                    long base = header.getLong(0);
                    int length = header.getInt(8);
                    if (length <= 0 || base >= end) {
                        break;
                    }
                    batches.add(base + "-" + (base + header.getInt(23)) + "@" + header.getInt(12) + ":"
                            + Integer.toUnsignedString(header.getInt(17), 16));
                    position += 12 + length;
                }
            }
        }
        return batches;
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
