package io.cairn.compat.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.RawKafkaClient;
import io.cairn.wire.message.FetchResponseData;
import io.cairn.wire.message.ProduceResponseData;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.InvalidTimestampException;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Kafka's append rules ({@code LogValidator}) seen from clients, the same on Cairn and on Apache Kafka: record
 * errors (KIP-467) for keyless records in a compressed batch on a compacted topic and for timestamps outside
 * {@code message.timestamp.before.max.ms}, INVALID_TIMESTAMP for a producer that claims LogAppendTime,
 * RECORD_LIST_TOO_LARGE for a batch larger than {@code segment.bytes}, the topic's {@code compression.type} applied
 * to what consumers fetch, and the max timestamp taken from the records, not from the header. Where Kafka 4.1 answers
 * a malformed compressed batch with UNKNOWN_SERVER_ERROR (garbled gzip, inner offsets that skip), the scenario
 * says so and checks Cairn's answer (CORRUPT_MESSAGE, INVALID_RECORD).
 */
@Timeout(180)
@ExtendWith(BrokerLogsExtension.class)
class LogValidatorRulesIT {

    private static final short INVALID_RECORD = 87;
    private static final short INVALID_TIMESTAMP = 32;
    private static final short RECORD_LIST_TOO_LARGE = 18;
    private static final short CORRUPT_MESSAGE = 2;
    private static final short UNKNOWN_SERVER_ERROR = -1;
    private static final int MIB = 1024 * 1024;

    private static byte[] utf8(String text) {
        return text == null ? null : text.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] batch(Compression compression, TimestampType type, int capacity, SimpleRecord... records) {
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(capacity), RecordBatch.MAGIC_VALUE_V2,
                compression, type, 0L);
        for (SimpleRecord r : records) {
            builder.append(r);
        }
        ByteBuffer buffer = builder.build().buffer();
        byte[] bytes = new byte[buffer.remaining()];
        buffer.get(bytes);
        return bytes;
    }

    private static byte[] batch(Compression compression, SimpleRecord... records) {
        return batch(compression, TimestampType.CREATE_TIME, 64 * 1024, records);
    }

    private static ProduceResponseData.PartitionProduceResponse produce(BrokerProcess broker, String topic,
            byte[] batch) {
        try (RawKafkaClient client = RawKafkaClient.connect(broker)) {
            ProduceResponseData response = DataClients.call(client, DataClients.produceRequest(topic, 0, (short) -1,
                    batch), DataClients.PRODUCE_VERSION);
            return DataClients.onlyPartition(response);
        }
    }

    private static List<MutableRecordBatch> fetchAll(BrokerProcess broker, Uuid topicId) {
        try (RawKafkaClient client = RawKafkaClient.connect(broker)) {
            FetchResponseData response = DataClients.call(client, DataClients.fetchRequest(topicId, 0, 0, 0),
                    DataClients.FETCH_VERSION);
            List<MutableRecordBatch> batches = new ArrayList<>();
            DataClients.records(DataClients.onlyPartition(response)).batches().forEach(batches::add);
            return batches;
        }
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.data.DataClients#kinds")
    void keylessRecordsInACompressedBatchOnACompactedTopicGetRecordErrors(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = DataClients.uniqueTopic("keyless-zstd");
        DataClients.createTopic(broker, topic, 1, Map.of("cleanup.policy", "compact"));
        long now = System.currentTimeMillis();

        // When
        ProduceResponseData.PartitionProduceResponse response = produce(broker, topic, batch(Compression.zstd().build(),
                new SimpleRecord(now, null, utf8("a")), new SimpleRecord(now, utf8("k"), utf8("b")),
                new SimpleRecord(now, null, utf8("c"))));

        // Then
        assertThat(response.errorCode()).isEqualTo(INVALID_RECORD);
        assertThat(response.recordErrors()).extracting(e -> e.batchIndex()).containsExactly(0, 2);
        assertThat(response.recordErrors().get(0).batchIndexErrorMessage())
                .isEqualTo("Compacted topic cannot accept message without key in topic partition " + topic + "-0");
        assertThat(response.errorMessage()).startsWith("One or more records have been rejected due to 2 record "
                + "errors in total, and only showing the first three errors at most: [RecordError(batchIndex=0, ");
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.data.DataClients#kinds")
    void aRecordOlderThanTimestampBeforeMaxMsIsInvalidTimestamp(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = DataClients.uniqueTopic("ts-before");
        DataClients.createTopic(broker, topic, 1, Map.of("message.timestamp.before.max.ms", "60000"));
        long now = System.currentTimeMillis();
        long old = now - 3_600_000L;

        // When
        ProduceResponseData.PartitionProduceResponse response = produce(broker, topic, batch(Compression.lz4().build(),
                new SimpleRecord(now, null, utf8("a")), new SimpleRecord(old, null, utf8("old"))));

        // Then
        assertThat(response.errorCode()).isEqualTo(INVALID_TIMESTAMP);
        assertThat(response.errorMessage()).isEqualTo("One or more records have been rejected due to invalid timestamp");
        assertThat(response.recordErrors()).singleElement().satisfies(e -> {
            assertThat(e.batchIndex()).isEqualTo(1);
            assertThat(e.batchIndexErrorMessage()).startsWith("Timestamp " + old + " of message with offset 1 is out "
                    + "of range. The timestamp should be within [");
        });
        try (KafkaProducer<byte[], byte[]> producer = DataClients.producer(broker, Map.of())) {
            assertThatThrownBy(() -> producer.send(new ProducerRecord<>(topic, 0, old, null, utf8("old")))
                    .get(DataClients.TIMEOUT_S, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(InvalidTimestampException.class);
        }
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.data.DataClients#kinds")
    void aProducerThatClaimsLogAppendTimeIsInvalidTimestamp(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = DataClients.uniqueTopic("claims-lat");
        DataClients.createTopic(broker, topic, 1, Map.of("message.timestamp.type", "LogAppendTime"));

        // When
        ProduceResponseData.PartitionProduceResponse response = produce(broker, topic, batch(Compression.NONE,
                TimestampType.LOG_APPEND_TIME, 1024, new SimpleRecord(System.currentTimeMillis(), null, utf8("a"))));

        // Then
        assertThat(response.errorCode()).isEqualTo(INVALID_TIMESTAMP);
        assertThat(response.recordErrors()).extracting(e -> e.batchIndex()).containsExactly(0);
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.data.DataClients#kinds")
    void aBatchLargerThanSegmentBytesIsRecordListTooLarge(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = DataClients.uniqueTopic("small-segment");
        DataClients.createTopic(broker, topic, 1, Map.of("segment.bytes", Integer.toString(MIB),
                "max.message.bytes", Integer.toString(4 * MIB)));

        // When
        ProduceResponseData.PartitionProduceResponse response = produce(broker, topic, batch(Compression.NONE,
                TimestampType.CREATE_TIME, 2 * MIB, new SimpleRecord(System.currentTimeMillis(), null,
                        new byte[3 * MIB / 2])));

        // Then
        assertThat(response.errorCode()).isEqualTo(RECORD_LIST_TOO_LARGE);
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.data.DataClients#kinds")
    void theTopicsCompressionTypeIsWhatConsumersFetch(BrokerKind kind) throws Exception {
        // Given: gzip on the topic, an uncompressed producer; then an lz4 producer on an uncompressed topic
        BrokerProcess broker = kind.shared();
        String gzipTopic = DataClients.uniqueTopic("topic-gzip");
        Uuid gzipId = DataClients.createTopic(broker, gzipTopic, 1, Map.of("compression.type", "gzip"));
        String plainTopic = DataClients.uniqueTopic("topic-uncompressed");
        Uuid plainId = DataClients.createTopic(broker, plainTopic, 1, Map.of("compression.type", "uncompressed"));

        // When
        send(broker, gzipTopic, "none");
        send(broker, plainTopic, "lz4");

        // Then
        assertStored(fetchAll(broker, gzipId), CompressionType.GZIP);
        assertStored(fetchAll(broker, plainId), CompressionType.NONE);
    }

    private static void send(BrokerProcess broker, String topic, String compression) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = DataClients.producer(broker, Map.of(
                ProducerConfig.COMPRESSION_TYPE_CONFIG, compression, ProducerConfig.LINGER_MS_CONFIG, 100))) {
            List<java.util.concurrent.Future<?>> sent = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                sent.add(producer.send(new ProducerRecord<>(topic, 0, null, utf8("value-" + i))));
            }
            for (java.util.concurrent.Future<?> f : sent) {
                f.get(DataClients.TIMEOUT_S, TimeUnit.SECONDS);
            }
        }
    }

    private static void assertStored(List<MutableRecordBatch> batches, CompressionType expected) {
        assertThat(batches).isNotEmpty().allSatisfy(b -> assertThat(b.compressionType()).isEqualTo(expected));
        List<String> values = new ArrayList<>();
        long next = 0;
        for (MutableRecordBatch b : batches) {
            for (Record r : b) {
                assertThat(r.offset()).isEqualTo(next++);
                values.add(StandardCharsets.UTF_8.decode(r.value()).toString());
            }
        }
        assertThat(values).containsExactly("value-0", "value-1", "value-2", "value-3", "value-4");
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.data.DataClients#kinds")
    void theMaxTimestampComesFromTheRecordsNotTheHeader(BrokerKind kind) throws Exception {
        // Given: a snappy batch whose header claims a max timestamp half an hour after its records'
        BrokerProcess broker = kind.shared();
        String topic = DataClients.uniqueTopic("max-ts");
        DataClients.createTopic(broker, topic, 1, Map.of());
        long now = System.currentTimeMillis();
        byte[] bytes = batch(Compression.snappy().build(), new SimpleRecord(now - 20, null, utf8("a")),
                new SimpleRecord(now - 10, null, utf8("b")), new SimpleRecord(now - 30, null, utf8("c")));
        MemoryRecords.readableRecords(ByteBuffer.wrap(bytes)).batches().iterator().next()
                .setMaxTimestamp(TimestampType.CREATE_TIME, now + 1_800_000L);

        // When
        ProduceResponseData.PartitionProduceResponse response = produce(broker, topic, bytes);
        ListOffsetsResultInfo max;
        try (Admin admin = DataClients.admin(broker)) {
            max = admin.listOffsets(Map.of(new TopicPartition(topic, 0), OffsetSpec.maxTimestamp())).all()
                    .get(DataClients.TIMEOUT_S, TimeUnit.SECONDS).get(new TopicPartition(topic, 0));
        }

        // Then
        assertThat(response.errorCode()).isZero();
        assertThat(max.timestamp()).isEqualTo(now - 10);
    }

    /** Sets a v2 header int of a batch and has kafka-clients redo the CRC. */
    private static byte[] patchInt(byte[] batch, int at, int value) {
        ByteBuffer buffer = ByteBuffer.wrap(batch);
        buffer.putInt(at, value);
        MutableRecordBatch header = MemoryRecords.readableRecords(buffer).batches().iterator().next();
        header.setMaxTimestamp(TimestampType.CREATE_TIME, header.maxTimestamp() + 1);
        header.setMaxTimestamp(TimestampType.CREATE_TIME, header.maxTimestamp() - 1);
        return batch;
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.data.DataClients#kinds")
    void aCompressedBatchShortOfItsCountIsInvalidRecordAndGarbledCompressedBytesAreCorrupt(BrokerKind kind)
            throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = DataClients.uniqueTopic("compressed-broken");
        DataClients.createTopic(broker, topic, 1, Map.of());
        long now = System.currentTimeMillis();
        byte[] shortOfCount = batch(Compression.gzip().build(), new SimpleRecord(now, null, utf8("a")),
                new SimpleRecord(now, null, utf8("b")));
        patchInt(shortOfCount, 57, 3);
        patchInt(shortOfCount, 23, 2);
        byte[] garbled = batch(Compression.gzip().build(), new SimpleRecord(now, null, utf8("some value")));
        for (int i = 61; i < garbled.length; i++) {
            garbled[i] = 0x55;
        }
        patchInt(garbled, 57, 1);

        // When
        ProduceResponseData.PartitionProduceResponse count = produce(broker, topic, shortOfCount);
        ProduceResponseData.PartitionProduceResponse corrupt = produce(broker, topic, garbled);

        // Then: Kafka 4.1 fails the garbled one with UNKNOWN_SERVER_ERROR (its KafkaException from the gzip stream)
        assertThat(count.errorCode()).isEqualTo(INVALID_RECORD);
        assertThat(corrupt.errorCode()).isEqualTo(kind == BrokerKind.KAFKA ? UNKNOWN_SERVER_ERROR : CORRUPT_MESSAGE);
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.data.DataClients#kinds")
    void compressedInnerOffsetsThatSkipAreRefused(BrokerKind kind) throws Exception {
        // Given: a gzip batch of two records with inner offsets 0 and 2 under a header saying offsets 0..1
        BrokerProcess broker = kind.shared();
        String topic = DataClients.uniqueTopic("inner-offsets");
        Uuid id = DataClients.createTopic(broker, topic, 1, Map.of());
        long now = System.currentTimeMillis();
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(1024), RecordBatch.MAGIC_VALUE_V2,
                Compression.gzip().build(), TimestampType.CREATE_TIME, 0L);
        builder.appendWithOffset(0, new SimpleRecord(now, null, utf8("a")));
        builder.appendWithOffset(2, new SimpleRecord(now, null, utf8("b")));
        ByteBuffer buffer = builder.build().buffer();
        byte[] bytes = new byte[buffer.remaining()];
        buffer.get(bytes);
        patchInt(bytes, 23, 1);

        // When
        ProduceResponseData.PartitionProduceResponse response = produce(broker, topic, bytes);

        // Then: Kafka 4.1 means to rebuild such a batch but fails (UnsupportedOperationException from its
        // key-skipping record) with UNKNOWN_SERVER_ERROR; Cairn refuses it. Nothing is stored either way.
        assertThat(response.errorCode()).isEqualTo(kind == BrokerKind.KAFKA ? UNKNOWN_SERVER_ERROR : INVALID_RECORD);
        assertThat(fetchAll(broker, id)).isEmpty();
    }
}
