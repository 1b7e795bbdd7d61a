package io.cairn.compat.data;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every acknowledged record survives a broker restart: records produced with acks=all (idempotent, the default)
 * and with acks=1 are all acknowledged, the broker is stopped (SIGTERM) and started again on the same port and
 * data, more records are acknowledged, the broker is killed (SIGKILL) and started again; after each restart a
 * consumer reads every acknowledged record back at its offset, and producing afterwards continues at the next
 * offset. A consumer that stays open through both restarts (and so validates its position against the new
 * leader epoch) reads every acks=all record exactly once. (One broker per kind for both restarts: a start after
 * SIGKILL waits out the old broker session.)
 */
@Timeout(300)
@ExtendWith(BrokerLogsExtension.class)
@Tag("faults")
class RestartIT {

    private static final int PARTITIONS = 2;
    private static final int RECORDS = 5_000;
    private static final int RECORDS_AFTER = 100;

    @ParameterizedTest
    @MethodSource("io.cairn.compat.data.DataClients#kinds")
    void everyAcknowledgedRecordShouldBeReadBackAfterAStopAndAfterAKill(BrokerKind kind) throws Exception {
        // Given
        try (BrokerProcess broker = kind.start()) {
            String acksAll = DataClients.uniqueTopic("restart-acks-all");
            String acksOne = DataClients.uniqueTopic("restart-acks-one");
            DataClients.createTopic(broker, acksAll, PARTITIONS, Map.of());
            DataClients.createTopic(broker, acksOne, PARTITIONS, Map.of());
            List<TopicPartition> livePartitions = DataClients.partitions(acksAll, PARTITIONS);
            Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> liveRead = new HashMap<>();
            try (KafkaConsumer<byte[], byte[]> live = DataClients.consumer(broker, Map.of())) {
                live.assign(livePartitions);
                live.seekToBeginning(livePartitions);
                produceBoth(broker, acksAll, acksOne, 0, RECORDS);
                pollUntil(live, liveRead, RECORDS);

                // When
                broker.stop();
                broker.start();

                // Then
                assertReadBack(broker, acksAll, RECORDS);
                assertReadBack(broker, acksOne, RECORDS);

                // Given
                produceBoth(broker, acksAll, acksOne, RECORDS, RECORDS);
                pollUntil(live, liveRead, 2 * RECORDS);

                // When
                broker.kill();
                broker.start();

                // Then
                assertReadBack(broker, acksAll, 2 * RECORDS);
                assertReadBack(broker, acksOne, 2 * RECORDS);
                produceBoth(broker, acksAll, acksOne, 2 * RECORDS, RECORDS_AFTER);
                assertReadBack(broker, acksAll, 2 * RECORDS + RECORDS_AFTER);
                assertReadBack(broker, acksOne, 2 * RECORDS + RECORDS_AFTER);
                pollUntil(live, liveRead, 2 * RECORDS + RECORDS_AFTER);
                assertRecords(acksAll, liveRead, 2 * RECORDS + RECORDS_AFTER);
            }
            assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
        }
    }

    /**
     * Polls the consumer that stays open across the restarts (it validates its position against the new leader
     * epoch with OffsetForLeaderEpoch) until it has read {@code total} records.
     */
    private static void pollUntil(KafkaConsumer<byte[], byte[]> live,
            Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> read, int total) {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (read.values().stream().mapToInt(List::size).sum() < total) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("The consumer that stayed open read " + read.values().stream()
                        .mapToInt(List::size).sum() + " of " + total + " records within 60 s");
            }
            for (ConsumerRecord<byte[], byte[]> record : live.poll(Duration.ofMillis(500))) {
                read.computeIfAbsent(new TopicPartition(record.topic(), record.partition()), tp -> new ArrayList<>())
                        .add(record);
            }
        }
    }

    /** Records {@code from..from+count-1} with acks=all (idempotent) to one topic and with acks=1 to the other. */
    private static void produceBoth(BrokerProcess broker, String acksAll, String acksOne, int from, int count) {
        produce(broker, acksAll, Map.of(), from, count);
        produce(broker, acksOne, Map.of(ProducerConfig.ACKS_CONFIG, "1",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false), from, count);
    }

    /** Sends records {@code from..from+count-1} (record i to partition i % 2) and asserts each is acknowledged. */
    private static void produce(BrokerProcess broker, String topic, Map<String, Object> overrides, int from,
            int count) {
        Queue<String> errors = new ConcurrentLinkedQueue<>();
        try (KafkaProducer<byte[], byte[]> producer = DataClients.producer(broker, overrides)) {
            for (int i = from; i < from + count; i++) {
                String value = value(i);
                producer.send(new ProducerRecord<>(topic, i % PARTITIONS, null, value.getBytes(StandardCharsets.UTF_8)),
                        (metadata, error) -> {
                            if (error != null) {
                                errors.add(value + ": " + error);
                            }
                        });
            }
            producer.flush();
        }
        assertThat(errors).as("failed sends to %s", topic).isEmpty();
    }

    private static void assertReadBack(BrokerProcess broker, String topic, int records) {
        assertRecords(topic, DataClients.readAll(broker, DataClients.partitions(topic, PARTITIONS),
                Duration.ofSeconds(60)), records);
    }

    /** Records {@code 0..records-1} of {@code topic}, each once, at its offset, in order per partition. */
    private static void assertRecords(String topic, Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> read,
            int records) {
        for (int p = 0; p < PARTITIONS; p++) {
            List<String> expected = new ArrayList<>();
            List<Long> offsets = new ArrayList<>();
            for (int i = p; i < records; i += PARTITIONS) {
                offsets.add((long) expected.size());
                expected.add(value(i));
            }
            List<ConsumerRecord<byte[], byte[]>> partition = read.getOrDefault(new TopicPartition(topic, p),
                    List.of());
            assertThat(partition).as("values of %s-%d", topic, p)
                    .extracting(r -> new String(r.value(), StandardCharsets.UTF_8))
                    .containsExactlyElementsOf(expected);
            assertThat(partition).as("offsets of %s-%d", topic, p).extracting(ConsumerRecord::offset)
                    .containsExactlyElementsOf(offsets);
        }
    }

    private static String value(int i) {
        return "record-" + i;
    }
}
