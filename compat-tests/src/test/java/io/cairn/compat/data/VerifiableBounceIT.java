package io.cairn.compat.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.compat.group.GroupClients;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.VerifiableClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Kafka's system-test clients across broker bounces, as kafkatest's replication tests drive them, on one broker:
 * Kafka's {@code VerifiableProducer} (acks=all, idempotent, retrying) sends while the broker is stopped cleanly twice
 * and killed with SIGKILL twice; then {@code VerifiableConsumer} reads the topic in a group. Every acknowledged
 * record is consumed, each partition in the order it was sent, and none twice. Runs against Cairn and the reference
 * Kafka; with several brokers (replication) the same clients and checks apply to leader bounces.
 */
@Timeout(600)
@ExtendWith(BrokerLogsExtension.class)
@Tag("faults")
class VerifiableBounceIT {

    private static final Duration PROGRESS_TIMEOUT = Duration.ofSeconds(90);

    static List<BrokerKind> kinds() {
        return GroupClients.kinds().toList();
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void everyAcknowledgedRecordSurvivesCleanAndHardBouncesInOrderAndOnce(BrokerKind kind) throws Exception {
        // Given
        try (BrokerProcess broker = kind.start()) {
            String topic = GroupClients.createTopic(broker, "bounce", 3);
            Map<String, String> producerConfig = Map.of("acks", "all", "enable.idempotence", "true",
                    "retries", Integer.toString(Integer.MAX_VALUE), "max.in.flight.requests.per.connection", "5",
                    "delivery.timeout.ms", "120000", "linger.ms", "5",
                    // keyless records stick to one partition for 16 KB each; spread them so every partition is bounced
                    "partitioner.class", "org.apache.kafka.clients.producer.RoundRobinPartitioner");
            List<Map<String, String>> acked;
            try (VerifiableClient producer = VerifiableClient.producer(broker.bootstrapServers(), topic, -1, 500,
                    producerConfig)) {
                awaitAcked(producer, 200);

                // When: two clean stops and two SIGKILLs, the producer sending throughout
                for (int bounce = 0; bounce < 4; bounce++) {
                    int before = producer.events("producer_send_success").size();
                    if (bounce % 2 == 0) {
                        broker.stop();
                    } else {
                        broker.kill();
                    }
                    broker.start();
                    awaitAcked(producer, before + 200);
                }
                producer.close();
                acked = producer.events("producer_send_success");
                List<String> out = producer.stdout();
                assertThat(out).as("the producer shut down cleanly; its last lines: %s %s",
                        out.subList(Math.max(0, out.size() - 3), out.size()), producer.stderr())
                        .anyMatch(line -> line.contains("\"name\":\"shutdown_complete\""));
            }

            // Then
            Map<Integer, List<Long>> ackedByPartition = new TreeMap<>();
            Set<String> ackedValues = new HashSet<>();
            for (Map<String, String> event : acked) {
                ackedByPartition.computeIfAbsent(Integer.parseInt(event.get("partition")), p -> new ArrayList<>())
                        .add(Long.parseLong(event.get("value")));
                ackedValues.add(event.get("value"));
            }
            assertThat(ackedByPartition.keySet()).as("acknowledged partitions").containsExactly(0, 1, 2);
            List<Map<String, String>> consumed;
            try (VerifiableClient consumer = VerifiableClient.consumer(broker.bootstrapServers(), topic,
                    GroupClients.uniqueName("bounce-group"), Map.of())) {
                await().atMost(PROGRESS_TIMEOUT).pollInterval(Duration.ofMillis(200)).until(() -> consumedValues(
                        consumer.events("record_data")).containsAll(ackedValues));
                consumer.close();
                consumed = consumer.events("record_data");
            }
            assertThat(consumedValues(consumed)).as("every acknowledged record is consumed")
                    .containsAll(ackedValues);
            Map<Integer, List<Long>> consumedByPartition = new HashMap<>();
            for (Map<String, String> record : consumed) {
                consumedByPartition.computeIfAbsent(Integer.parseInt(record.get("partition")), p -> new ArrayList<>())
                        .add(Long.parseLong(record.get("value")));
            }
            for (Map.Entry<Integer, List<Long>> partition : consumedByPartition.entrySet()) {
                List<Long> values = partition.getValue();
                assertThat(values).as("partition %d: in the order sent, none twice (idempotent producer)",
                        partition.getKey()).isSortedAccordingTo(Long::compare).doesNotHaveDuplicates();
                assertThat(values).as("partition %d: its acknowledged records", partition.getKey())
                        .containsAll(ackedByPartition.get(partition.getKey()));
            }
            assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
        }
    }

    private static void awaitAcked(VerifiableClient producer, int count) {
        await().atMost(PROGRESS_TIMEOUT).pollInterval(Duration.ofMillis(100)).until(() -> {
            if (!producer.isRunning()) {
                throw new AssertionError("the producer exited: " + producer.stdout() + producer.stderr());
            }
            return producer.events("producer_send_success").size() >= count;
        });
    }

    private static Set<String> consumedValues(List<Map<String, String>> records) {
        Set<String> values = new HashSet<>();
        records.forEach(record -> values.add(record.get("value")));
        return values;
    }
}
