package io.cairn.compat.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.RawKafkaClient;
import io.cairn.wire.message.ApiVersionsRequestData;
import io.cairn.wire.message.ApiVersionsResponseData;
import io.cairn.wire.message.FetchResponseData;
import io.cairn.wire.message.ProduceResponseData;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Bad input on the data path gets Kafka's error code and harms nothing else: a batch with a corrupt CRC
 * (CORRUPT_MESSAGE), a batch whose record count disagrees with its records (INVALID_RECORD, what Kafka 4.1
 * answers), an oversized record (MESSAGE_TOO_LARGE), a fetch by an unknown topic id (UNKNOWN_TOPIC_ID) and a fetch
 * beyond the log end (OFFSET_OUT_OF_RANGE); a bad batch sent with acks=0 closes the connection. Afterwards the same
 * connection (where it stays open) still produces, other clients still work, and the records written before are
 * intact with nothing of the rejected batch among them. A consumer with {@code auto.offset.reset=earliest} that
 * seeks past the end resets and reads the data.
 */
@Timeout(120)
@ExtendWith(BrokerLogsExtension.class)
class DataPathBadInputIT {

    private static final int GOOD_RECORDS = 10;
    private static final int CRC_OFFSET = 17;
    private static final int ATTRIBUTES_OFFSET = 21;
    private static final int RECORDS_COUNT_OFFSET = 57;
    private static final short CORRUPT_MESSAGE = 2;
    private static final short MESSAGE_TOO_LARGE = 10;
    private static final short OFFSET_OUT_OF_RANGE = 1;
    private static final short UNKNOWN_TOPIC_ID = 100;
    private static final short INVALID_RECORD = 87;
    private static final int MAX_MESSAGE_BYTES = 1000;

    @ParameterizedTest
    @MethodSource("io.cairn.compat.data.DataClients#kinds")
    void batchWithCorruptCrcShouldBeRejectedWithCorruptMessage(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = DataClients.uniqueTopic("bad-crc");
        DataClients.createTopic(broker, topic, 1, Map.of());
        try (RawKafkaClient client = RawKafkaClient.connect(broker)) {
            produceGood(client, topic, 0);
            byte[] batch = batch("corrupt", 3);
            batch[batch.length - 2] ^= 0x55;

            // When
            ProduceResponseData.PartitionProduceResponse response = produce(client, topic, batch);

            // Then
            assertThat(response.errorCode()).isEqualTo(CORRUPT_MESSAGE);
            assertStillServes(broker, client, topic);
        }
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.data.DataClients#kinds")
    void corruptBatchWithAcksZeroShouldCloseTheConnection(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = DataClients.uniqueTopic("bad-crc-acks0");
        DataClients.createTopic(broker, topic, 1, Map.of());
        try (RawKafkaClient client = RawKafkaClient.connect(broker)) {
            produceGood(client, topic, 0);
            byte[] batch = batch("corrupt", 3);
            batch[batch.length - 2] ^= 0x55;

            // When
            client.send(DataClients.produceRequest(topic, 0, (short) 0, batch), DataClients.PRODUCE_VERSION);

            // Then
            assertThat(client.awaitClosed(DataClients.TIMEOUT))
                    .as("the connection closed, the only error an acks=0 producer can see").isTrue();
        }
        try (RawKafkaClient other = RawKafkaClient.connect(broker)) {
            assertStillServes(broker, other, topic);
        }
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.data.DataClients#kinds")
    void batchClaimingMoreRecordsThanItHoldsShouldBeRejected(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = DataClients.uniqueTopic("bad-count");
        DataClients.createTopic(broker, topic, 1, Map.of());
        try (RawKafkaClient client = RawKafkaClient.connect(broker)) {
            produceGood(client, topic, 0);
            byte[] batch = withRecordCount(batch("miscounted", 3), 4);

            // When
            ProduceResponseData.PartitionProduceResponse response = produce(client, topic, batch);

            // Then
            assertThat(response.errorCode()).isEqualTo(INVALID_RECORD);
            assertStillServes(broker, client, topic);
        }
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.data.DataClients#kinds")
    void batchClaimingFewerRecordsThanItHoldsShouldBeRejected(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = DataClients.uniqueTopic("bad-count-low");
        DataClients.createTopic(broker, topic, 1, Map.of());
        try (RawKafkaClient client = RawKafkaClient.connect(broker)) {
            produceGood(client, topic, 0);
            byte[] batch = withRecordCount(batch("miscounted", 3), 2);

            // When
            ProduceResponseData.PartitionProduceResponse response = produce(client, topic, batch);

            // Then
            assertThat(response.errorCode()).isEqualTo(INVALID_RECORD);
            assertStillServes(broker, client, topic);
        }
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.data.DataClients#kinds")
    void recordOverMaxMessageBytesShouldBeRejectedWithMessageTooLarge(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = DataClients.uniqueTopic("too-large");
        DataClients.createTopic(broker, topic, 1, Map.of("max.message.bytes", Integer.toString(MAX_MESSAGE_BYTES)));
        try (RawKafkaClient client = RawKafkaClient.connect(broker);
                KafkaProducer<byte[], byte[]> producer = DataClients.producer(broker, Map.of())) {
            produceGood(client, topic, 0);
            byte[] batch = DataClients.batch(new SimpleRecord(System.currentTimeMillis(), null,
                    new byte[2 * MAX_MESSAGE_BYTES]));

            // When
            ProduceResponseData.PartitionProduceResponse response = produce(client, topic, batch);

            // Then
            assertThat(response.errorCode()).isEqualTo(MESSAGE_TOO_LARGE);
            assertThatThrownBy(() -> producer.send(new ProducerRecord<>(topic, 0, null,
                    new byte[2 * MAX_MESSAGE_BYTES])).get(DataClients.TIMEOUT_S, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(RecordTooLargeException.class);
            assertStillServes(broker, client, topic);
        }
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.data.DataClients#kinds")
    void fetchByUnknownTopicIdShouldFailWithUnknownTopicId(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = DataClients.uniqueTopic("unknown-id");
        DataClients.createTopic(broker, topic, 1, Map.of());
        try (RawKafkaClient client = RawKafkaClient.connect(broker)) {
            produceGood(client, topic, 0);

            // When
            FetchResponseData response = DataClients.call(client,
                    DataClients.fetchRequest(Uuid.randomUuid(), 0, 0, 0), DataClients.FETCH_VERSION);

            // Then
            assertThat(response.errorCode()).isZero();
            FetchResponseData.PartitionData partition = DataClients.onlyPartition(response);
            assertThat(DataClients.records(partition).sizeInBytes()).isZero();
            assertThat(partition.errorCode()).isEqualTo(UNKNOWN_TOPIC_ID);
            assertStillServes(broker, client, topic);
        }
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.data.DataClients#kinds")
    void fetchBeyondTheLogEndShouldFailWithOffsetOutOfRange(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = DataClients.uniqueTopic("out-of-range");
        Uuid topicId = DataClients.createTopic(broker, topic, 1, Map.of());
        try (RawKafkaClient client = RawKafkaClient.connect(broker)) {
            produceGood(client, topic, 0);

            // When
            FetchResponseData response = DataClients.call(client,
                    DataClients.fetchRequest(topicId, 0, GOOD_RECORDS + 1000, 0), DataClients.FETCH_VERSION);

            // Then
            assertThat(response.errorCode()).isZero();
            FetchResponseData.PartitionData partition = DataClients.onlyPartition(response);
            assertThat(DataClients.records(partition).sizeInBytes()).isZero();
            assertThat(partition.errorCode()).isEqualTo(OFFSET_OUT_OF_RANGE);
            assertStillServes(broker, client, topic);
        }
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.data.DataClients#kinds")
    void consumerWithEarliestResetShouldReadFromTheStartAfterSeekingPastTheEnd(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = DataClients.uniqueTopic("reset-earliest");
        DataClients.createTopic(broker, topic, 1, Map.of());
        try (RawKafkaClient client = RawKafkaClient.connect(broker)) {
            produceGood(client, topic, 0);
        }
        TopicPartition partition = new TopicPartition(topic, 0);
        List<ConsumerRecord<byte[], byte[]>> read = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = DataClients.consumer(broker,
                Map.of(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"))) {
            consumer.assign(List.of(partition));
            consumer.seek(partition, GOOD_RECORDS + 1000);

            // When
            long deadline = System.nanoTime() + DataClients.TIMEOUT.toNanos();
            while (read.size() < GOOD_RECORDS && System.nanoTime() - deadline < 0) {
                consumer.poll(Duration.ofMillis(500)).forEach(read::add);
            }
        }

        // Then
        assertThat(read).extracting(ConsumerRecord::offset)
                .containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L);
        assertThat(read).extracting(r -> new String(r.value(), StandardCharsets.UTF_8))
                .containsExactlyElementsOf(goodValues(0));
    }

    /** Ten good records at {@code base}; the response must be error-free at that base offset. */
    private static void produceGood(RawKafkaClient client, String topic, long base) {
        ProduceResponseData.PartitionProduceResponse response = produce(client, topic, goodBatch(base));
        assertThat(response.errorCode()).as("error of a good produce").isZero();
        assertThat(response.baseOffset()).isEqualTo(base);
    }

    private static ProduceResponseData.PartitionProduceResponse produce(RawKafkaClient client, String topic,
            byte[] batch) {
        ProduceResponseData response = DataClients.call(client, DataClients.produceRequest(topic, 0, (short) 1,
                batch), DataClients.PRODUCE_VERSION);
        return DataClients.onlyPartition(response);
    }

    /**
     * After a bad request: the same connection produces the next ten good records right after the first ten, another
     * connection answers ApiVersions, and a consumer reads exactly the twenty good records.
     */
    private static void assertStillServes(BrokerProcess broker, RawKafkaClient client, String topic) {
        assertThat(client.isOpen()).as("the connection that sent the bad request is open").isTrue();
        produceGood(client, topic, GOOD_RECORDS);
        try (RawKafkaClient other = RawKafkaClient.connect(broker)) {
            ApiVersionsResponseData versions = DataClients.call(other, new ApiVersionsRequestData()
                    .setClientSoftwareName("other").setClientSoftwareVersion("1.0"), (short) 3);
            assertThat(versions.errorCode()).isZero();
        }
        TopicPartition partition = new TopicPartition(topic, 0);
        List<ConsumerRecord<byte[], byte[]>> read = DataClients.readAll(broker, List.of(partition),
                DataClients.TIMEOUT).get(partition);
        List<String> expected = new ArrayList<>(goodValues(0));
        expected.addAll(goodValues(GOOD_RECORDS));
        assertThat(read).extracting(r -> new String(r.value(), StandardCharsets.UTF_8))
                .containsExactlyElementsOf(expected);
        assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
    }

    private static byte[] goodBatch(long base) {
        SimpleRecord[] records = new SimpleRecord[GOOD_RECORDS];
        List<String> values = goodValues(base);
        for (int i = 0; i < GOOD_RECORDS; i++) {
            records[i] = new SimpleRecord(System.currentTimeMillis(), ("k" + i).getBytes(StandardCharsets.UTF_8),
                    values.get(i).getBytes(StandardCharsets.UTF_8));
        }
        return DataClients.batch(records);
    }

    private static List<String> goodValues(long base) {
        List<String> values = new ArrayList<>();
        for (int i = 0; i < GOOD_RECORDS; i++) {
            values.add("good-" + (base + i));
        }
        return values;
    }

    private static byte[] batch(String prefix, int count) {
        SimpleRecord[] records = new SimpleRecord[count];
        for (int i = 0; i < count; i++) {
            records[i] = new SimpleRecord(System.currentTimeMillis(), ("k" + i).getBytes(StandardCharsets.UTF_8),
                    (prefix + "-" + i).getBytes(StandardCharsets.UTF_8));
        }
        return DataClients.batch(records);
    }

    /** {@code batch} with its records-count field set to {@code count} and a CRC that matches the change. */
    private static byte[] withRecordCount(byte[] batch, int count) {
        ByteBuffer buffer = ByteBuffer.wrap(batch);
        buffer.putInt(RECORDS_COUNT_OFFSET, count);
        CRC32C crc = new CRC32C();
        crc.update(batch, ATTRIBUTES_OFFSET, batch.length - ATTRIBUTES_OFFSET);
        buffer.putInt(CRC_OFFSET, (int) crc.getValue());
        MemoryRecords.readableRecords(ByteBuffer.wrap(batch)).batches().forEach(b -> b.ensureValid());
        return batch;
    }
}
