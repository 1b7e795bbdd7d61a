package io.cairn.compat.replication;

import static io.cairn.compat.replication.ReplicationClients.STATE_TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.BrokerSessions;
import io.cairn.testkit.VerifiableClient;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Kafka's replication system test ({@code kafkatest} {@code replication_test.py}) on a 3-node cluster: a topic of 3
 * partitions at replication factor 3 with {@code min.insync.replicas=2}, Kafka's stock {@code VerifiableProducer}
 * (acks=all, retrying; idempotent or not) sending throughout and {@code VerifiableConsumer} reading in a group,
 * while partition leaders are stopped cleanly (SIGTERM) and killed (SIGKILL) and restarted, and the active controller
 * is killed and restarted. Before each bounce the harness waits for every partition (the topic's and
 * {@code __consumer_offsets}') to have its full ISR again, as Admin describes it.
 *
 * <p>Then: every acknowledged record was consumed by the group; a fresh group reads each partition in the order it
 * was sent, with no record twice when the producer is idempotent (without idempotence a retried batch may be stored
 * twice, but never out of order, with one request in flight). {@code -Dcairn.faults.bounces=N} sets the number of
 * clean and of SIGKILL leader bounces with the idempotent producer (2 each by default; {@code .ci/run} runs Kafka's
 * 5 and 5); without idempotence the scenario does at most 2 of each, as the same bounces prove ordering there.
 */
@Timeout(1800)
@ExtendWith(BrokerLogsExtension.class)
@Tag("faults")
class ReplicationBounceIT {

    private static final int PARTITIONS = 3;
    private static final int MIN_ISR = 2;
    private static final int THROUGHPUT = 100;
    /** Acknowledgements the producer must add between bounces: the cluster serves writes again. */
    private static final int PROGRESS = 100;
    private static final Duration PROGRESS_TIMEOUT = Duration.ofSeconds(120);
    private static final String OFFSETS_TOPIC = "__consumer_offsets";

    static Stream<Arguments> cases() {
        return ReplicationClients.kinds().flatMap(kind -> Stream.of(Arguments.of(kind, true),
                Arguments.of(kind, false)));
    }

    @ParameterizedTest(name = "{0} idempotent={1}")
    @MethodSource("cases")
    void everyAcknowledgedRecordSurvivesLeaderAndControllerBounces(BrokerKind kind, boolean idempotent)
            throws Exception {
        // Given
        try (BrokerCluster cluster = BrokerCluster.create(kind, ReplicationClients.NODES,
                BrokerSessions.quick(ReplicationClients.clusterConfig()));
             Admin admin = ReplicationClients.startAndConnect(cluster)) {
            String topic = ReplicationClients.uniqueName("repl-bounce");
            ReplicationClients.createTopic(admin, topic, PARTITIONS, MIN_ISR);
            List<Map<String, String>> acked;
            List<Map<String, String>> consumedDuringBounces;
            int sendErrors;
            List<String> bounces = new ArrayList<>();
            try (VerifiableClient producer = VerifiableClient.producer(cluster.bootstrapServers(), topic, -1,
                    THROUGHPUT, producerConfig(idempotent));
                 VerifiableClient consumer = VerifiableClient.consumer(cluster.bootstrapServers(), topic,
                         ReplicationClients.uniqueName("repl-bounce-group"), Map.of())) {
                awaitAcked(producer, PROGRESS);
                await().atMost(PROGRESS_TIMEOUT).until(() -> !consumer.events("record_data").isEmpty());

                // When: clean and SIGKILL bounces of partition leaders, then a SIGKILL of the active controller
                int count = idempotent ? ReplicationClients.bounces()
                        : Math.min(ReplicationClients.DEFAULT_BOUNCES, ReplicationClients.bounces());
                for (int i = 0; i < 2 * count; i++) {
                    boolean clean = i % 2 == 0;
                    int partition = i % PARTITIONS;
                    bounces.add(bounce(cluster, admin, topic, producer, clean, () -> ReplicationClients.leader(admin,
                            topic, partition), (clean ? "clean" : "SIGKILL") + " bounce of the leader of " + topic
                            + "-" + partition));
                }
                bounces.add(bounce(cluster, admin, topic, producer, false,
                        () -> cluster.activeControllerId(STATE_TIMEOUT), "SIGKILL bounce of the active controller"));
                ReplicationClients.awaitFullIsr(admin, List.of(topic, OFFSETS_TOPIC));
                producer.close();
                acked = producer.events("producer_send_success");
                sendErrors = producer.events("producer_send_error").size();
                assertShutDownCleanly(producer);
                Set<String> ackedValues = values(acked);
                await().atMost(PROGRESS_TIMEOUT).pollInterval(Duration.ofMillis(200))
                        .until(() -> values(consumer.events("record_data")).containsAll(ackedValues));
                consumer.close();
                consumedDuringBounces = consumer.events("record_data");
            }

            // Then
            List<Map<String, String>> verified = readAll(cluster, topic, values(acked));
            Map<Integer, List<Long>> ackedByPartition = byPartition(acked);
            Map<Integer, List<Long>> verifiedByPartition = byPartition(verified);
            int duplicates = verified.size() - values(verified).size();
            System.out.printf("%s idempotent=%s: %d records acknowledged, %d consumed by the group during the "
                            + "bounces, %d read back afterwards (%d duplicates, %d send errors); bounces: %s%n",
                    kind, idempotent, acked.size(), consumedDuringBounces.size(), verified.size(), duplicates,
                    sendErrors, String.join("; ", bounces));
            assertThat(ackedByPartition.keySet()).as("acknowledged partitions").containsExactly(0, 1, 2);
            assertThat(values(consumedDuringBounces)).as("every acknowledged record was consumed by the group")
                    .containsAll(values(acked));
            for (Map.Entry<Integer, List<Long>> partition : verifiedByPartition.entrySet()) {
                List<Long> read = partition.getValue();
                assertThat(new ArrayList<>(new LinkedHashSet<>(read)))
                        .as("partition %d: in the order sent", partition.getKey()).isSorted();
                assertThat(read).as("partition %d: every acknowledged record", partition.getKey())
                        .containsAll(ackedByPartition.get(partition.getKey()));
                if (idempotent) {
                    assertThat(read).as("partition %d: no record twice (idempotent producer)", partition.getKey())
                            .doesNotHaveDuplicates();
                }
            }
        }
    }

    /** Waits for full ISRs, takes the node {@code victim} names down and up again; returns what was done. */
    private static String bounce(BrokerCluster cluster, Admin admin, String topic, VerifiableClient producer,
                                 boolean clean, NodeChoice victim, String what) throws Exception {
        ReplicationClients.awaitFullIsr(admin, List.of(topic, OFFSETS_TOPIC));
        int before = producer.events("producer_send_success").size();
        int nodeId = victim.nodeId();
        BrokerProcess node = cluster.node(nodeId);
        Instant begin = Instant.now();
        if (clean) {
            node.stop();
        } else {
            node.kill();
        }
        awaitAcked(producer, before + PROGRESS);
        Duration served = Duration.between(begin, Instant.now());
        cluster.startNode(node);
        ReplicationClients.awaitFullIsr(admin, List.of(topic, OFFSETS_TOPIC));
        awaitAcked(producer, producer.events("producer_send_success").size() + PROGRESS);
        return what + " (node " + nodeId + ", " + PROGRESS + " more acks " + served.toMillis()
                + " ms after it went down, ISR full again " + Duration.between(begin, Instant.now()).toMillis()
                + " ms after)";
    }

    private static Map<String, String> producerConfig(boolean idempotent) {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("acks", "all");
        config.put("enable.idempotence", Boolean.toString(idempotent));
        config.put("retries", Integer.toString(Integer.MAX_VALUE));
        // Without idempotence only one request in flight keeps a retried batch from overtaking the next one.
        config.put("max.in.flight.requests.per.connection", idempotent ? "5" : "1");
        config.put("delivery.timeout.ms", "120000");
        config.put("linger.ms", "5");
        // Keyless records stick to one partition until 16 KB went to it, about 1,000 of these at 100 a second, so a
        // run picks a partition only a few times and may never pick one (it happened: no record of partition 2 in a
        // run); round robin sends to every partition, as VerifiableBounceIT does.
        config.put("partitioner.class", "org.apache.kafka.clients.producer.RoundRobinPartitioner");
        return config;
    }

    /** A fresh group reading the whole topic after the bounces, until it has every acknowledged record. */
    private static List<Map<String, String>> readAll(BrokerCluster cluster, String topic, Set<String> acked) {
        try (VerifiableClient reader = VerifiableClient.consumer(cluster.bootstrapServers(), topic,
                ReplicationClients.uniqueName("repl-bounce-verify"), Map.of())) {
            await().atMost(PROGRESS_TIMEOUT).pollInterval(Duration.ofMillis(200))
                    .until(() -> values(reader.events("record_data")).containsAll(acked));
            reader.close();
            return reader.events("record_data");
        }
    }

    private static void awaitAcked(VerifiableClient producer, int count) {
        await().atMost(PROGRESS_TIMEOUT).pollInterval(Duration.ofMillis(100))
                .alias("the producer reaches " + count + " acknowledgements").until(() -> {
                    if (!producer.isRunning()) {
                        throw new AssertionError("the producer exited: " + tail(producer.stdout())
                                + producer.stderr());
                    }
                    return producer.events("producer_send_success").size() >= count;
                });
    }

    private static void assertShutDownCleanly(VerifiableClient producer) {
        assertThat(producer.stdout()).as("the producer shut down cleanly; its last lines: %s %s",
                tail(producer.stdout()), producer.stderr())
                .anyMatch(line -> line.contains("\"name\":\"shutdown_complete\""));
        assertThat(producer.events("producer_send_error")).as("records the producer gave up on").isEmpty();
    }

    private static List<String> tail(List<String> lines) {
        return lines.subList(Math.max(0, lines.size() - 3), lines.size());
    }

    private static Set<String> values(List<Map<String, String>> events) {
        Set<String> values = new HashSet<>();
        events.forEach(event -> values.add(event.get("value")));
        return values;
    }

    private static Map<Integer, List<Long>> byPartition(List<Map<String, String>> events) {
        Map<Integer, List<Long>> result = new TreeMap<>();
        for (Map<String, String> event : events) {
            result.computeIfAbsent(Integer.parseInt(event.get("partition")), p -> new ArrayList<>())
                    .add(Long.parseLong(event.get("value")));
        }
        return result;
    }

    /** Which node a bounce takes down, looked up just before it. */
    @FunctionalInterface
    private interface NodeChoice {
        int nodeId() throws Exception;
    }
}
