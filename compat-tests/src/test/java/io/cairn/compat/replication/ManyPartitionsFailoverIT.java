package io.cairn.compat.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerSessions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.ElectionNotNeededException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Failover at scale: a 3-node cluster with one topic of many partitions ({@code -Dcairn.faults.partitions}, 300 by
 * default) at replication factor 3 and {@code min.insync.replicas=2}, an idempotent acks=all producer writing to
 * every partition in turn throughout. First the broker that leads the most partitions and is not the active
 * controller is killed (SIGKILL): every partition must get a live leader and take new acknowledged writes, the node
 * restarts and rejoins every ISR, and a preferred-leader election (what {@code kafka-leader-election.sh --election-type
 * PREFERRED --all-topic-partitions} sends) gives every partition back to its first replica. Then the same with the
 * active controller killed, so a third of the partitions lose their leader while the quorum elects a new one. At the
 * end a consumer reads every partition: every acknowledged record, in the order sent, none twice. It prints how long
 * each step took: the failover (the broker session timeout, during which acks=all stalls on every partition whose ISR
 * still holds the dead node), the first acknowledgement of each partition after it, the rejoin and the election.
 */
@Timeout(900)
@ExtendWith(BrokerLogsExtension.class)
@Tag("faults")
class ManyPartitionsFailoverIT {

    private static final int PARTITIONS = Integer.getInteger("cairn.faults.partitions", 300);
    private static final int MIN_ISR = 2;
    private static final Duration SCALE_TIMEOUT = Duration.ofSeconds(180);

    static Stream<BrokerKind> kinds() {
        return ReplicationClients.kinds();
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void everyPartitionFailsOverTakesWritesRejoinsAndReturnsToItsPreferredLeader(BrokerKind kind) throws Exception {
        try (BrokerCluster cluster = BrokerCluster.create(kind, ReplicationClients.NODES,
                BrokerSessions.quick(ReplicationClients.clusterConfig()));
             Admin admin = ReplicationClients.startAndConnect(cluster)) {
            String topic = ReplicationClients.uniqueName("many");
            long created = System.nanoTime();
            ReplicationClients.createTopic(admin, topic, PARTITIONS, MIN_ISR);
            List<String> timeline = new ArrayList<>();
            timeline.add(PARTITIONS + " partitions created in " + millisSince(created) + " ms");
            try (Writer writer = new Writer(cluster, topic)) {
                writer.mark();
                writer.awaitProgressSinceMark();

                for (boolean controller : new boolean[] {false, true}) {
                    // Given: every partition has a full ISR and its preferred leader
                    int victim = controller ? cluster.activeControllerId(ReplicationClients.STATE_TIMEOUT)
                            : busiestLeaderOtherThan(admin, topic, cluster.activeControllerId(
                                    ReplicationClients.STATE_TIMEOUT));

                    // When: it is killed
                    int led = (int) ReplicationClients.partitions(admin, topic).stream()
                            .filter(p -> p.leader() != null && p.leader().id() == victim).count();
                    long killed = System.nanoTime();
                    cluster.node(victim).kill();

                    // Then: every partition has a live leader and takes new writes (acks=all waits for the whole
                    // ISR, so every partition stalls until the controller fences the dead node and takes it out of
                    // the ISRs, at the same time as it moves the leaderships)
                    awaitPartitions(admin, topic, "a live leader", p -> p.leader() != null && !p.leader().isEmpty()
                            && p.leader().id() != victim);
                    long failedOver = millisSince(killed);
                    writer.mark();
                    writer.awaitProgressSinceMark();
                    String what = (controller ? "the active controller" : "the busiest leader") + " (node " + victim
                            + ", leading " + led + " partitions)";
                    String writable = writer.progressSinceMark();

                    // When: it restarts
                    long restarted = System.nanoTime();
                    cluster.startNode(cluster.node(victim));

                    // Then: it rejoins every ISR, and a preferred election gives every partition back to its first
                    // replica
                    awaitPartitions(admin, topic, "a full ISR", p -> p.isr().size() == ReplicationClients.REPLICAS);
                    long rejoined = millisSince(restarted);
                    electPreferredLeaders(admin, topic);
                    awaitPartitions(admin, topic, "its first replica as leader",
                            p -> p.leader() != null && p.leader().id() == p.replicas().get(0).id());
                    writer.mark();
                    writer.awaitProgressSinceMark();
                    timeline.add("kill of " + what + ": every partition led elsewhere after " + failedOver
                            + " ms, then a new acknowledgement on every partition (" + writable + "); full ISRs "
                            + rejoined + " ms after the restart, preferred leaders back " + millisSince(restarted)
                            + " ms after it");
                }
                writer.stop();
                System.out.printf("%s: %s; %d records acknowledged, %d send errors%n", kind,
                        String.join("; ", timeline), writer.ackedCount(), writer.errors.size());
                assertThat(writer.errors).as("records the idempotent producer gave up on").isEmpty();

                // Then: a consumer reads every acknowledged record of every partition, in order, once
                Map<Integer, List<Long>> read = readAll(cluster, topic);
                for (int p = 0; p < PARTITIONS; p++) {
                    List<Long> acked = writer.acked(p);
                    List<Long> values = read.getOrDefault(p, List.of());
                    assertThat(values).as("partition %d: in the order sent", p).isSorted();
                    assertThat(values).as("partition %d: no record twice", p).doesNotHaveDuplicates();
                    assertThat(values).as("partition %d: every acknowledged record", p).containsAll(acked);
                }
            }
        }
    }

    private static long millisSince(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    private static int busiestLeaderOtherThan(Admin admin, String topic, int controller) throws Exception {
        Map<Integer, Long> byLeader = ReplicationClients.partitions(admin, topic).stream()
                .filter(p -> p.leader() != null && p.leader().id() != controller)
                .collect(Collectors.groupingBy(p -> p.leader().id(), Collectors.counting()));
        return byLeader.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
    }

    /** As {@link ReplicationClients#awaitPartitions}, with the longer wait of this many partitions. */
    private static void awaitPartitions(Admin admin, String topic, String what,
                                        Predicate<TopicPartitionInfo> condition) {
        ReplicationClients.awaitPartitions(admin, List.of(topic), what, condition, SCALE_TIMEOUT);
    }

    /** Asks for a preferred-leader election of every partition; those already led by their first replica say so. */
    private static void electPreferredLeaders(Admin admin, String topic) throws Exception {
        Set<TopicPartition> all = IntStream.range(0, PARTITIONS).mapToObj(p -> new TopicPartition(topic, p))
                .collect(Collectors.toSet());
        await().atMost(SCALE_TIMEOUT).pollInterval(Duration.ofSeconds(1)).ignoreExceptions().untilAsserted(() -> {
            Map<TopicPartition, Optional<Throwable>> results = admin.electLeaders(ElectionType.PREFERRED,
                    all).partitions().get(60, TimeUnit.SECONDS);
            Map<TopicPartition, Throwable> failed = new HashMap<>();
            results.forEach((partition, error) -> error.filter(e -> !(e instanceof ElectionNotNeededException))
                    .ifPresent(e -> failed.put(partition, e)));
            assertThat(failed).as("partitions whose preferred election failed").isEmpty();
            assertThat(results.keySet()).as("partitions the election answered for").isEqualTo(all);
        });
    }

    private static Map<Integer, List<Long>> readAll(BrokerCluster cluster, String topic) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5_000);
        List<TopicPartition> partitions = IntStream.range(0, PARTITIONS).mapToObj(p -> new TopicPartition(topic, p))
                .toList();
        Map<Integer, List<Long>> read = new HashMap<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new StringDeserializer())) {
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, Duration.ofSeconds(60));
            await().atMost(SCALE_TIMEOUT).pollInSameThread().pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(1)).until(() -> {
                        for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                            read.computeIfAbsent(record.partition(), p -> new ArrayList<>())
                                    .add(Long.parseLong(record.value().substring(record.value().indexOf(':') + 1)));
                        }
                        return partitions.stream().allMatch(tp -> consumer.position(tp) >= ends.get(tp));
                    });
        }
        return read;
    }

    /**
     * A stock idempotent acks=all producer sending to partition 0, 1, ... in turn from a thread of its own, each
     * record {@code partition:sequence}; records what was acknowledged per partition and what failed.
     */
    private static final class Writer implements AutoCloseable {

        private static final int PER_SECOND = 3_000;

        private final KafkaProducer<String, String> producer;
        private final String topic;
        private final Map<Integer, List<Long>> acked = new ConcurrentHashMap<>();
        private final List<Throwable> errors = new CopyOnWriteArrayList<>();
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final AtomicReference<Throwable> failure = new AtomicReference<>();
        private final Thread thread;
        /** Per partition, the {@link System#nanoTime} of its first acknowledgement after the mark; 0 before it. */
        private final AtomicLongArray firstAckAfterMark = new AtomicLongArray(PARTITIONS);
        private volatile long markNanos;

        Writer(BrokerCluster cluster, String topic) {
            Map<String, Object> props = new HashMap<>();
            props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
            props.put(ProducerConfig.ACKS_CONFIG, "all");
            props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
            props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
            props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 300_000);
            props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 300_000);
            this.producer = new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
            this.topic = topic;
            for (int p = 0; p < PARTITIONS; p++) {
                acked.put(p, Collections.synchronizedList(new ArrayList<>()));
            }
            this.thread = new Thread(this::run, "many-partitions-writer");
            thread.setDaemon(true);
            thread.start();
        }

        private void run() {
            long[] sequences = new long[PARTITIONS];
            long start = System.nanoTime();
            long sent = 0;
            try {
                while (running.get()) {
                    for (int p = 0; p < PARTITIONS && running.get(); p++) {
                        int partition = p;
                        long sequence = sequences[p]++;
                        producer.send(new ProducerRecord<>(topic, p, null, p + ":" + sequence), (metadata, e) -> {
                            if (e == null) {
                                acked.get(partition).add(sequence);
                                long now = System.nanoTime();
                                if (now - markNanos > 0) {
                                    firstAckAfterMark.compareAndSet(partition, 0, now);
                                }
                            } else {
                                errors.add(e);
                            }
                        });
                        sent++;
                        long due = start + sent * TimeUnit.SECONDS.toNanos(1) / PER_SECOND;
                        long wait = due - System.nanoTime();
                        if (wait > 0) {
                            TimeUnit.NANOSECONDS.sleep(wait);
                        }
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                failure.set(e);
            }
        }

        /**
         * Starts a new watch of progress: from now on each partition's first acknowledgement is timed.
         */
        void mark() {
            markNanos = System.nanoTime();
            for (int p = 0; p < PARTITIONS; p++) {
                firstAckAfterMark.set(p, 0);
            }
        }

        /** Waits until every partition has had an acknowledgement since the last {@link #mark}. */
        void awaitProgressSinceMark() {
            await().atMost(SCALE_TIMEOUT).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
                assertThat(failure.get()).as("the writer's failure").isNull();
                Set<Integer> stalled = IntStream.range(0, PARTITIONS).filter(p -> firstAckAfterMark.get(p) == 0)
                        .boxed().collect(Collectors.toSet());
                assertThat(stalled).as("partitions without an acknowledged record since the mark").isEmpty();
            });
        }

        /** When the partitions had their first acknowledgement after the mark: median and last, in ms after it. */
        String progressSinceMark() {
            long[] millis = IntStream.range(0, PARTITIONS).mapToLong(p -> TimeUnit.NANOSECONDS.toMillis(
                    firstAckAfterMark.get(p) - markNanos)).sorted().toArray();
            return "median " + millis[millis.length / 2] + " ms after, the last " + millis[millis.length - 1]
                    + " ms after";
        }

        List<Long> acked(int partition) {
            synchronized (acked.get(partition)) {
                return new ArrayList<>(acked.get(partition));
            }
        }

        long ackedCount() {
            return acked.values().stream().mapToLong(List::size).sum();
        }

        /** Stops sending and waits for every record sent to be acknowledged or failed. */
        void stop() throws InterruptedException {
            running.set(false);
            thread.join(TimeUnit.SECONDS.toMillis(30));
            producer.flush();
        }

        @Override
        public void close() throws InterruptedException {
            running.set(false);
            thread.join(TimeUnit.SECONDS.toMillis(30));
            producer.close(Duration.ofSeconds(30));
        }
    }
}
