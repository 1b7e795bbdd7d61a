package io.cairn.compat.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An idempotent producer with five produce requests in flight on its connection keeps sending while the broker is
 * killed (SIGKILL) and started again on the same port and data: the producer retries what was in flight, every
 * record is acknowledged, and a consumer reads each exactly once, in order, with the per-partition sequence numbers
 * the values carry contiguous (no duplicate, no gap).
 */
@Timeout(300)
@ExtendWith(BrokerLogsExtension.class)
@Tag("faults")
class PipelinedProduceRestartIT {

    private static final Logger LOGGER = LogManager.getLogger(PipelinedProduceRestartIT.class);
    private static final int PARTITIONS = 3;
    private static final int RECORDS = 60_000;
    private static final int ACKED_BEFORE_KILL = 10_000;
    /** Makes each record about 100 bytes, so the stream lasts long enough to be cut. */
    private static final String PADDING = "/" + "x".repeat(90);

    @ParameterizedTest
    @MethodSource("io.cairn.compat.data.DataClients#kinds")
    void idempotentPipelinedProducerShouldNeitherDuplicateNorLoseAcrossAKill(BrokerKind kind) throws Exception {
        // Given
        try (BrokerProcess broker = kind.start()) {
            String topic = DataClients.uniqueTopic("pipelined");
            DataClients.createTopic(broker, topic, PARTITIONS, Map.of());
            AtomicInteger acknowledged = new AtomicInteger();
            Queue<String> errors = new ConcurrentLinkedQueue<>();
            ExecutorService sender = Executors.newSingleThreadExecutor();
            int ackedAtKill;
            try (KafkaProducer<byte[], byte[]> producer = DataClients.producer(broker, Map.of(
                    ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5,
                    ProducerConfig.BATCH_SIZE_CONFIG, 4096,
                    ProducerConfig.LINGER_MS_CONFIG, 0,
                    ProducerConfig.RETRY_BACKOFF_MS_CONFIG, 100,
                    ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 500,
                    ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000,
                    ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 180_000,
                    ProducerConfig.MAX_BLOCK_MS_CONFIG, 180_000))) {
                Future<?> sending = sender.submit(() -> {
                    for (int i = 0; i < RECORDS; i++) {
                        int partition = i % PARTITIONS;
                        String value = partition + ":" + i / PARTITIONS;
                        producer.send(new ProducerRecord<>(topic, partition, null,
                                (value + PADDING).getBytes(StandardCharsets.UTF_8)), (metadata, error) -> {
                                    if (error == null) {
                                        acknowledged.incrementAndGet();
                                    } else {
                                        errors.add(value + ": " + error);
                                    }
                                });
                    }
                });
                await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(5))
                        .until(() -> acknowledged.get() >= ACKED_BEFORE_KILL);

                // When
                broker.kill();
                ackedAtKill = acknowledged.get();
                broker.start();
                LOGGER.info("{}: killed after {} of {} records were acknowledged", kind, ackedAtKill, RECORDS);
                sending.get(180, TimeUnit.SECONDS);
                producer.flush();
            } finally {
                sender.shutdownNow();
            }
            Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> read = DataClients.readAll(broker,
                    DataClients.partitions(topic, PARTITIONS), Duration.ofSeconds(60));

            // Then
            assertThat(ackedAtKill).as("records acknowledged when the broker was killed").isLessThan(RECORDS);
            assertThat(errors).as("failed sends").isEmpty();
            assertThat(acknowledged.get()).isEqualTo(RECORDS);
            for (int p = 0; p < PARTITIONS; p++) {
                List<ConsumerRecord<byte[], byte[]>> records = read.get(new TopicPartition(topic, p));
                List<String> expected = new ArrayList<>();
                for (int seq = 0; seq < RECORDS / PARTITIONS; seq++) {
                    expected.add(p + ":" + seq);
                }
                List<String> values = records.stream().map(r -> new String(r.value(), StandardCharsets.UTF_8))
                        .map(v -> v.substring(0, v.length() - PADDING.length())).toList();
                assertContiguous(p, values, expected);
                for (int j = 0; j < records.size(); j++) {
                    assertThat(records.get(j).offset()).as("offset of record %d of partition %d", j, p)
                            .isEqualTo(j);
                }
            }
            assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
        }
    }

    /** Fails with the first duplicate or gap rather than a dump of 20,000 values. */
    private static void assertContiguous(int partition, List<String> values, List<String> expected) {
        for (int i = 0; i < Math.min(values.size(), expected.size()); i++) {
            if (!values.get(i).equals(expected.get(i))) {
                throw new AssertionError("Partition " + partition + " at offset " + i + ": expected "
                        + expected.get(i) + " but read " + values.get(i) + "; read around it: "
                        + values.subList(Math.max(0, i - 3), Math.min(values.size(), i + 4)));
            }
        }
        assertThat(values).as("records of partition %d", partition).hasSameSizeAs(expected);
    }
}
