package io.cairn.compat.data;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.RawKafkaClient;
import io.cairn.wire.message.FetchResponseData;
import io.cairn.wire.message.ProduceResponseData;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Fetch semantics a consumer relies on: a fetch whose offset lies inside a batch gets the whole batch (from its base
 * offset) and the Java consumer skips to its position; a fetch at the log end waits up to {@code max.wait.ms}; and a
 * consumer waiting there is woken by the next append at once, not when its wait runs out. A batch larger than the
 * consumer's fetch.max.bytes and max.partition.fetch.bytes is still returned whole (KIP-74), read_committed.
 */
@Timeout(120)
@ExtendWith(BrokerLogsExtension.class)
class LongPollIT {

    private static final Logger LOGGER = LogManager.getLogger(LongPollIT.class);
    private static final int BATCH_RECORDS = 10;
    private static final long FETCH_OFFSET = 5;
    private static final int MAX_WAIT_MS = 5_000;
    private static final int FETCH_LIMIT_BYTES = 1024;
    private static final long APPEND_DELAY_MS = 1_000;
    /** Generous for a loaded 2-core machine; a broker that waits out max.wait.ms takes about 4,000 ms. */
    private static final long WAKE_LIMIT_MS = 1_000;

    @ParameterizedTest
    @MethodSource("io.cairn.compat.data.DataClients#kinds")
    void fetchInsideABatchShouldReturnTheWholeBatch(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = DataClients.uniqueTopic("inside-batch");
        Uuid topicId = DataClients.createTopic(broker, topic, 1, Map.of());
        SimpleRecord[] records = new SimpleRecord[BATCH_RECORDS];
        for (int i = 0; i < BATCH_RECORDS; i++) {
            records[i] = new SimpleRecord(System.currentTimeMillis(), null, value(i));
        }
        MemoryRecords fetched;
        try (RawKafkaClient client = RawKafkaClient.connect(broker)) {
            ProduceResponseData produced = DataClients.call(client, DataClients.produceRequest(topic, 0, (short) 1,
                    DataClients.batch(records)), DataClients.PRODUCE_VERSION);
            assertThat(DataClients.onlyPartition(produced).errorCode()).isZero();

            // When
            FetchResponseData response = DataClients.call(client,
                    DataClients.fetchRequest(topicId, 0, FETCH_OFFSET, 0), DataClients.FETCH_VERSION);
            assertThat(DataClients.onlyPartition(response).errorCode()).isZero();
            fetched = DataClients.records(DataClients.onlyPartition(response));
        }
        List<ConsumerRecord<byte[], byte[]>> consumed = consumeFrom(broker, new TopicPartition(topic, 0),
                FETCH_OFFSET, BATCH_RECORDS - FETCH_OFFSET);

        // Then
        List<RecordBatch> batches = new ArrayList<>();
        fetched.batches().forEach(batches::add);
        assertThat(batches).hasSize(1);
        assertThat(batches.get(0).baseOffset()).isZero();
        assertThat(batches.get(0).lastOffset()).isEqualTo(BATCH_RECORDS - 1);
        List<Long> offsets = new ArrayList<>();
        for (Record record : batches.get(0)) {
            offsets.add(record.offset());
        }
        assertThat(offsets).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L);
        assertThat(consumed).extracting(ConsumerRecord::offset).containsExactly(5L, 6L, 7L, 8L, 9L);
        assertThat(consumed).extracting(r -> new String(r.value(), StandardCharsets.UTF_8))
                .containsExactly("v5", "v6", "v7", "v8", "v9");
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.data.DataClients#kinds")
    void batchLargerThanTheFetchLimitsShouldStillBeReturned(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = DataClients.uniqueTopic("over-limits");
        DataClients.createTopic(broker, topic, 1, Map.of());
        TopicPartition partition = new TopicPartition(topic, 0);
        SimpleRecord[] records = new SimpleRecord[BATCH_RECORDS];
        for (int i = 0; i < BATCH_RECORDS; i++) {
            records[i] = new SimpleRecord(System.currentTimeMillis(), null, largeValue(i));
        }
        try (RawKafkaClient client = RawKafkaClient.connect(broker)) {
            ProduceResponseData produced = DataClients.call(client, DataClients.produceRequest(topic, 0, (short) 1,
                    DataClients.batch(records)), DataClients.PRODUCE_VERSION);
            assertThat(DataClients.onlyPartition(produced).errorCode()).isZero();
        }
        List<ConsumerRecord<byte[], byte[]>> consumed = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = DataClients.consumer(broker, Map.of(
                ConsumerConfig.FETCH_MAX_BYTES_CONFIG, FETCH_LIMIT_BYTES,
                ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, FETCH_LIMIT_BYTES,
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"))) {
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));

            // When
            long deadline = System.nanoTime() + DataClients.TIMEOUT.toNanos();
            while (consumed.size() < BATCH_RECORDS && System.nanoTime() - deadline < 0) {
                consumer.poll(Duration.ofMillis(500)).forEach(consumed::add);
            }
        }

        // Then
        assertThat(consumed).extracting(ConsumerRecord::offset).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L);
        for (int i = 0; i < BATCH_RECORDS; i++) {
            assertThat(consumed.get(i).value()).as("value %d", i).isEqualTo(largeValue(i));
        }
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.data.DataClients#kinds")
    void fetchAtTheLogEndShouldWaitForMaxWait(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = DataClients.uniqueTopic("wait-at-end");
        Uuid topicId = DataClients.createTopic(broker, topic, 1, Map.of());
        int maxWaitMs = 1_000;
        try (RawKafkaClient client = RawKafkaClient.connect(broker)) {
            // When
            long start = System.nanoTime();
            FetchResponseData response = DataClients.call(client, DataClients.fetchRequest(topicId, 0, 0, maxWaitMs),
                    DataClients.FETCH_VERSION);
            long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

            // Then
            assertThat(DataClients.onlyPartition(response).errorCode()).isZero();
            assertThat(DataClients.records(DataClients.onlyPartition(response)).sizeInBytes()).isZero();
            assertThat(elapsedMs).as("ms until the empty fetch was answered").isGreaterThanOrEqualTo(maxWaitMs - 100);
        }
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.data.DataClients#kinds")
    void consumerAtTheLogEndShouldBeWokenByTheNextAppend(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = DataClients.uniqueTopic("long-poll");
        DataClients.createTopic(broker, topic, 1, Map.of());
        TopicPartition partition = new TopicPartition(topic, 0);
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
        KafkaConsumer<byte[], byte[]> consumer = DataClients.consumer(broker,
                Map.of(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, MAX_WAIT_MS));
        try (KafkaProducer<byte[], byte[]> producer = DataClients.producer(broker,
                Map.of(ProducerConfig.LINGER_MS_CONFIG, 0))) {
            producer.send(new ProducerRecord<>(topic, 0, null, value(0))).get(DataClients.TIMEOUT_S,
                    TimeUnit.SECONDS);
            consumer.assign(List.of(partition));
            consumer.seekToEnd(List.of(partition));
            assertThat(consumer.position(partition, DataClients.TIMEOUT)).isEqualTo(1L);

            // When
            ScheduledFuture<Long> sent = scheduler.schedule(() -> {
                long at = System.nanoTime();
                RecordMetadata metadata = producer.send(new ProducerRecord<>(topic, 0, null, value(1)))
                        .get(DataClients.TIMEOUT_S, TimeUnit.SECONDS);
                assertThat(metadata.offset()).isEqualTo(1L);
                return at;
            }, APPEND_DELAY_MS, TimeUnit.MILLISECONDS);
            List<ConsumerRecord<byte[], byte[]>> received = new ArrayList<>();
            long deadline = System.nanoTime() + DataClients.TIMEOUT.toNanos();
            while (received.isEmpty() && System.nanoTime() - deadline < 0) {
                consumer.poll(Duration.ofMillis(MAX_WAIT_MS * 2)).forEach(received::add);
            }
            long receivedAt = System.nanoTime();

            // Then
            assertThat(received).extracting(ConsumerRecord::offset).containsExactly(1L);
            long delayMs = TimeUnit.NANOSECONDS.toMillis(receivedAt - sent.get(DataClients.TIMEOUT_S,
                    TimeUnit.SECONDS));
            LOGGER.info("{}: the consumer at the log end received a record {} ms after it was sent", kind, delayMs);
            assertThat(delayMs).as("ms from send to receive").isLessThan(WAKE_LIMIT_MS);
        } finally {
            scheduler.shutdownNow();
            // Do not wait for the answer to the consumer's next long poll, which is pending until max.wait.ms.
            consumer.close(CloseOptions.timeout(Duration.ZERO));
        }
    }

    private static List<ConsumerRecord<byte[], byte[]>> consumeFrom(BrokerProcess broker, TopicPartition partition,
            long offset, long count) {
        List<ConsumerRecord<byte[], byte[]>> consumed = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = DataClients.consumer(broker, Map.of())) {
            consumer.assign(List.of(partition));
            consumer.seek(partition, offset);
            long deadline = System.nanoTime() + DataClients.TIMEOUT.toNanos();
            while (consumed.size() < count && System.nanoTime() - deadline < 0) {
                consumer.poll(Duration.ofMillis(500)).forEach(consumed::add);
            }
        }
        return consumed;
    }

    /** 4 KiB, so the batch of ten is 40 times the fetch limits. */
    private static byte[] largeValue(int i) {
        byte[] value = new byte[4096];
        Arrays.fill(value, (byte) ('a' + i));
        return value;
    }

    private static byte[] value(int i) {
        return ("v" + i).getBytes(StandardCharsets.UTF_8);
    }
}
