package io.cairn.compat.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.CairnProcess;
import io.cairn.testkit.SizedTmpfs;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnknownServerException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A full disk under a broker (its only log directory on a small tmpfs, {@link SizedTmpfs}): a producer writes until
 * the disk is full. The broker answers the failed write {@code KAFKA_STORAGE_ERROR} (never
 * {@code UNKNOWN_SERVER_ERROR}), logs Kafka's line naming the failed directory ("Shutdown broker because all log dirs
 * in ... have failed") and halts with exit code 1, as Kafka does; it writes nothing after the failed write.
 * Started again on the still-full disk, it halts again at once (before, it waited 70 s for a registration its own
 * metadata log could not write). Once space is freed (the tmpfs grown in place) it starts again, recovery cuts off
 * what the failed write left, every acknowledged record is read back at its offset, none twice, and producing goes on
 * after them.
 *
 * <p>Cairn only: the reference Kafka formats its storage from a separate process, which does not see the namespace's
 * tmpfs. Skipped where the machine cannot make a mount namespace (neither root nor user namespaces), unless
 * {@value SizedTmpfs#REQUIRE} is set (CI sets it), which makes that a failure.
 */
@Timeout(180)
@ExtendWith(BrokerLogsExtension.class)
@Tag("faults")
class FullDiskIT {

    /** The temp files and directories of this class's tests, removed after them. */
    @TempDir
    static Path tmp;

    private static final int DISK_MIB = 24;
    private static final int VALUE_BYTES = 1024;
    /** More than the disk holds: the loop ends when the broker does. */
    private static final int MAX_RECORDS = 4 * DISK_MIB * 1024;
    private static final Duration HALT_TIMEOUT = Duration.ofSeconds(60);

    @Test
    void aFullDiskHaltsTheBrokerAndEveryAcknowledgedRecordIsReadBackOnceSpaceIsFreed() throws Exception {
        // Given: a broker whose only log directory is a 24 MiB file system
        Path root = Files.createTempDirectory(tmp, "cairn-full-disk-");
        SizedTmpfs disk = SizedTmpfs.mount(root.resolve("disk"), DISK_MIB);
        BrokerProcess broker = CairnProcess.builder().config("log.dirs", disk.dir().toString()).build();
        broker.commandPrefix(disk.enterCommand());
        try (disk; broker) {
            broker.start();
            String topic = DataClients.uniqueTopic("full-disk");
            DataClients.createTopic(broker, topic, 1, Map.of());
            Map<Long, String> acked = new ConcurrentSkipListMap<>();
            Queue<Exception> errors = new ConcurrentLinkedQueue<>();

            // When: an idempotent acks=all producer writes 1 KiB records until the broker stops
            try (KafkaProducer<byte[], byte[]> producer = DataClients.producer(broker, Map.of(
                    ProducerConfig.LINGER_MS_CONFIG, 5,
                    ProducerConfig.MAX_BLOCK_MS_CONFIG, 5_000,
                    ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000,
                    ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 10_000))) {
                for (int i = 0; i < MAX_RECORDS && broker.isRunning(); i++) {
                    String value = value(i);
                    try {
                        producer.send(new ProducerRecord<>(topic, 0, null, value.getBytes(StandardCharsets.UTF_8)),
                                (RecordMetadata metadata, Exception error) -> {
                                    if (error == null) {
                                        acked.put(metadata.offset(), value);
                                    } else {
                                        errors.add(error);
                                    }
                                });
                    } catch (org.apache.kafka.common.errors.TimeoutException e) {
                        break; // the buffer is full and the broker no longer answers
                    }
                }
                await().atMost(HALT_TIMEOUT).until(() -> !broker.isRunning());
                producer.close(Duration.ZERO);
            }

            // Then: it halted with exit code 1 and said why, and the producer never saw an unknown server error
            assertThat(broker.exitCode()).isEqualTo(OptionalInt.of(1));
            assertThat(broker.logLinesContaining("Shutdown broker because all log dirs in " + disk.dir()
                    + " have failed")).hasSize(1);
            assertThat(errors).noneMatch(e -> e instanceof UnknownServerException);
            assertThat(acked).hasSizeGreaterThan(1_000);

            // When: it starts again on the still-full disk
            assertThatThrownBy(broker::start).hasMessageContaining("exited with code 1");

            // Then: it halts again at once, naming the failed directory, and loses nothing (below)
            assertThat(broker.logLinesContaining("Shutdown broker because")).hasSize(2)
                    .allMatch(line -> line.contains(disk.dir().toString()));

            // When: space is freed and the broker starts again on the same data
            disk.resize(4 * DISK_MIB);
            broker.start();

            // Then: every acknowledged record is there at its offset, and no value twice
            TopicPartition tp = new TopicPartition(topic, 0);
            List<ConsumerRecord<byte[], byte[]>> read = DataClients.readAll(broker, List.of(tp),
                    Duration.ofSeconds(60)).get(tp);
            Map<Long, String> byOffset = new ConcurrentSkipListMap<>();
            Set<String> values = new HashSet<>();
            for (ConsumerRecord<byte[], byte[]> record : read) {
                String value = new String(record.value(), StandardCharsets.UTF_8);
                byOffset.put(record.offset(), value);
                assertThat(values.add(value)).as("value read twice: %s", value.substring(0, 16)).isTrue();
            }
            acked.forEach((offset, value) -> assertThat(byOffset.get(offset)).as("offset %d", offset)
                    .isEqualTo(value));

            // And: producing goes on after them
            try (KafkaProducer<byte[], byte[]> producer = DataClients.producer(broker, Map.of())) {
                RecordMetadata next = producer.send(new ProducerRecord<>(topic, 0, null,
                        "after".getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
                assertThat(next.offset()).isEqualTo(read.size());
            }
        }
    }

    private static String value(int i) {
        String head = String.format("record-%09d-", i);
        return head + "x".repeat(VALUE_BYTES - head.length());
    }
}
