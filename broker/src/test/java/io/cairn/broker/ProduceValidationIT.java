package io.cairn.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.testkit.CompressionBomb;
import io.cairn.testkit.LeakDetection;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.message.ProduceResponseData.PartitionProduceResponse;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The leader's append rules (Kafka's {@code LogValidator}) over real sockets against an in-process broker: batches
 * a stock producer sends, and hand-built ones (kafka-clients' encoder, or {@link CompressionBomb}) that only a broken
 * or hostile client sends, each checked by the error code and record errors the client sees.
 */
@ExtendWith(LeakDetection.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ProduceValidationIT {

    private static final long MIB = 1024 * 1024;

    @TempDir
    static Path dataDir;

    private static InProcessBroker broker;
    private static Admin admin;
    private static int correlationId;

    @BeforeAll
    static void startBroker() throws Exception {
        broker = InProcessBroker.start(dataDir, Map.of());
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        admin = Admin.create(props);
    }

    @AfterAll
    static void stopBroker() {
        admin.close();
        broker.close();
    }

    private static String bootstrap() {
        return "127.0.0.1:" + broker.port();
    }

    private static void createTopic(String name, Map<String, String> configs) throws Exception {
        admin.createTopics(List.of(new NewTopic(name, 1, (short) 1).configs(configs))).all().get(30, TimeUnit.SECONDS);
        broker.awaitHosted(name, 1);
    }

    private static byte[] bytes(String text) {
        return text == null ? null : text.getBytes(StandardCharsets.UTF_8);
    }

    private static ByteBuffer produceFrame(String topic, ByteBuffer records) {
        short version = 11;
        ProduceRequestData data = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(30_000);
        ProduceRequestData.TopicProduceData topicData = new ProduceRequestData.TopicProduceData().setName(topic);
        topicData.partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(0)
                .setRecords(MemoryRecords.readableRecords(records)));
        data.topicData().add(topicData);
        RequestHeader header = new RequestHeader(ApiKeys.PRODUCE, version, KafkaWire.CLIENT_ID, ++correlationId);
        ByteBuffer headerBytes = MessageUtil.toByteBufferAccessor(header.data(), header.headerVersion()).buffer();
        ByteBuffer body = MessageUtil.toByteBufferAccessor(data, version).buffer();
        ByteBuffer frame = ByteBuffer.allocate(headerBytes.remaining() + body.remaining());
        frame.put(headerBytes).put(body).flip();
        return frame;
    }

    private static PartitionProduceResponse produce(String topic, ByteBuffer records) throws IOException {
        try (RawConnection connection = broker.connect()) {
            connection.sendFrame(produceFrame(topic, records));
            ByteBuffer payload = connection.readFrame();
            ResponseHeader header = ResponseHeader.parse(payload, ApiKeys.PRODUCE.responseHeaderVersion((short) 11));
            assertThat(header.correlationId()).isEqualTo(correlationId);
            ProduceResponseData response = new ProduceResponseData(new ByteBufferAccessor(payload), (short) 11);
            return response.responses().iterator().next().partitionResponses().get(0);
        }
    }

    private static ByteBuffer batch(Compression compression, TimestampType type, SimpleRecord... records) {
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(64 * 1024), compression, type, 0L);
        for (SimpleRecord r : records) {
            builder.append(r);
        }
        return builder.build().buffer();
    }

    private static long allocatedByAllThreads() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (long allocated : threads.getThreadAllocatedBytes(threads.getAllThreadIds())) {
            sum += Math.max(allocated, 0);
        }
        return sum;
    }

    @ParameterizedTest(name = "codec {0}")
    @ValueSource(ints = {CompressionBomb.GZIP, CompressionBomb.ZSTD})
    void aHalfMegabyteBatchHoldingA512MibValueIsCorruptMessageAndTheBrokerHeapStaysBounded(int codec)
            throws Exception {
        // Given: a compacted topic (the case whose validation once decompressed without a bound)
        String topic = "bomb-" + codec;
        createTopic(topic, Map.of("cleanup.policy", "compact"));
        ByteBuffer bomb = CompressionBomb.batch(codec, bytes("k"), 512 * MIB, System.currentTimeMillis());
        assertThat(bomb.remaining()).isLessThan((int) MIB);
        long before = allocatedByAllThreads();

        // When
        PartitionProduceResponse response = produce(topic, bomb);

        // Then: never a server error, and the broker allocated a bounded amount, far below the value's size
        assertThat(Errors.forCode(response.errorCode())).isEqualTo(Errors.CORRUPT_MESSAGE);
        assertThat(allocatedByAllThreads() - before).isLessThan(320 * MIB);
        PartitionProduceResponse next = produce(topic, batch(Compression.gzip().build(), TimestampType.CREATE_TIME,
                new SimpleRecord(System.currentTimeMillis(), bytes("k"), bytes("v"))));
        assertThat(Errors.forCode(next.errorCode())).isEqualTo(Errors.NONE);
        assertThat(next.baseOffset()).isZero();
    }

    @Test
    void keylessRecordsInACompressedBatchOnACompactedTopicGetRecordErrors() throws Exception {
        // Given
        createTopic("compressed-compacted", Map.of("cleanup.policy", "compact"));
        long now = System.currentTimeMillis();

        // When
        PartitionProduceResponse response = produce("compressed-compacted", batch(Compression.zstd().build(),
                TimestampType.CREATE_TIME, new SimpleRecord(now, null, bytes("a")),
                new SimpleRecord(now, bytes("k"), bytes("b")), new SimpleRecord(now, null, bytes("c"))));

        // Then
        assertThat(Errors.forCode(response.errorCode())).isEqualTo(Errors.INVALID_RECORD);
        assertThat(response.recordErrors()).extracting(e -> e.batchIndex()).containsExactly(0, 2);
        assertThat(response.recordErrors().get(0).batchIndexErrorMessage())
                .isEqualTo("Compacted topic cannot accept message without key in topic partition "
                        + "compressed-compacted-0");
        assertThat(response.errorMessage()).startsWith("One or more records have been rejected due to 2 record");
    }

    @Test
    void aRecordOlderThanTimestampBeforeMaxMsIsInvalidTimestampWithItsIndex() throws Exception {
        // Given
        createTopic("ts-before", Map.of("message.timestamp.before.max.ms", "60000"));
        long now = System.currentTimeMillis();

        // When
        PartitionProduceResponse response = produce("ts-before", batch(Compression.lz4().build(),
                TimestampType.CREATE_TIME, new SimpleRecord(now, null, bytes("a")),
                new SimpleRecord(now - 3_600_000L, null, bytes("old"))));

        // Then
        assertThat(Errors.forCode(response.errorCode())).isEqualTo(Errors.INVALID_TIMESTAMP);
        assertThat(response.errorMessage()).isEqualTo("One or more records have been rejected due to invalid timestamp");
        assertThat(response.recordErrors()).singleElement().satisfies(e -> {
            assertThat(e.batchIndex()).isEqualTo(1);
            assertThat(e.batchIndexErrorMessage()).startsWith("Timestamp " + (now - 3_600_000L)
                    + " of message with offset 1 is out of range.");
        });
    }

    @Test
    void aRecordTooFarInTheFutureIsInvalidTimestamp() throws Exception {
        // Given
        createTopic("ts-after", Map.of("message.timestamp.after.max.ms", "60000"));

        // When
        PartitionProduceResponse response = produce("ts-after", batch(Compression.NONE, TimestampType.CREATE_TIME,
                new SimpleRecord(System.currentTimeMillis() + 3_600_000L, null, bytes("future"))));

        // Then
        assertThat(Errors.forCode(response.errorCode())).isEqualTo(Errors.INVALID_TIMESTAMP);
        assertThat(response.recordErrors()).extracting(e -> e.batchIndex()).containsExactly(0);
    }

    @Test
    void aBatchLargerThanSegmentBytesIsRecordBatchTooLarge() throws Exception {
        // Given
        createTopic("small-segments", Map.of("segment.bytes", "1048576", "max.message.bytes", "4194304"));
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(2 * (int) MIB), Compression.NONE,
                TimestampType.CREATE_TIME, 0L);
        builder.append(new SimpleRecord(System.currentTimeMillis(), null, new byte[(int) (1.5 * MIB)]));

        // When
        PartitionProduceResponse response = produce("small-segments", builder.build().buffer());

        // Then
        assertThat(Errors.forCode(response.errorCode())).isEqualTo(Errors.RECORD_LIST_TOO_LARGE);
    }

    @Test
    void anIdempotentBatchWithoutASequenceIsInvalidRecord() throws Exception {
        // Given
        createTopic("no-sequence", Map.of());
        MemoryRecords built = MemoryRecords.withIdempotentRecords(Compression.NONE, 42L, (short) 0, 0,
                new SimpleRecord(System.currentTimeMillis(), null, bytes("a")));
        ByteBuffer records = built.buffer();
        records.putInt(53, -1); // baseSequence; a new max timestamp makes kafka-clients redo the CRC
        org.apache.kafka.common.record.MutableRecordBatch header = built.batches().iterator().next();
        header.setMaxTimestamp(TimestampType.CREATE_TIME, header.maxTimestamp() + 1);

        // When
        PartitionProduceResponse response = produce("no-sequence", records);

        // Then
        assertThat(Errors.forCode(response.errorCode())).isEqualTo(Errors.INVALID_RECORD);
    }

    @ParameterizedTest(name = "topic compression.type {0}")
    @ValueSource(strings = {"gzip", "zstd", "uncompressed", "producer"})
    void aStockProducersRecordsComeBackWhateverTheTopicsCompressionType(String topicCompression) throws Exception {
        // Given: a producer compressing with lz4 (recompressed unless the topic keeps the producer's codec)
        String topic = "compression-" + topicCompression;
        createTopic(topic, Map.of("compression.type", topicCompression, "message.timestamp.type", "LogAppendTime"));
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        props.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        props.put(ProducerConfig.LINGER_MS_CONFIG, "50");
        long before = System.currentTimeMillis();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props, new ByteArraySerializer(),
                new ByteArraySerializer())) {
            for (int i = 0; i < 20; i++) {
                producer.send(new ProducerRecord<>(topic, 0, 1L, bytes("k" + i), bytes("value-" + i)));
            }
            producer.flush();
        }

        // When
        Properties consumerProps = new Properties();
        consumerProps.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        consumerProps.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<ConsumerRecord<byte[], byte[]>> got = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            consumer.assign(List.of(new TopicPartition(topic, 0)));
            long deadline = System.currentTimeMillis() + 30_000;
            while (got.size() < 20 && System.currentTimeMillis() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(got::add);
            }
        }

        // Then: every record in order, stamped with the broker's append time
        assertThat(got).hasSize(20);
        for (int i = 0; i < 20; i++) {
            assertThat(got.get(i).offset()).isEqualTo(i);
            assertThat(new String(got.get(i).value(), StandardCharsets.UTF_8)).isEqualTo("value-" + i);
            assertThat(got.get(i).timestampType()).isEqualTo(TimestampType.LOG_APPEND_TIME);
            assertThat(got.get(i).timestamp()).isGreaterThanOrEqualTo(before);
        }
    }

    /** Sets a v2 header int of a batch built by kafka-clients and has kafka-clients redo the CRC. */
    private static ByteBuffer patchInt(ByteBuffer batch, int at, int value) {
        batch.putInt(at, value);
        org.apache.kafka.common.record.MutableRecordBatch header = MemoryRecords.readableRecords(batch.duplicate())
                .batches().iterator().next();
        header.setMaxTimestamp(TimestampType.CREATE_TIME, header.maxTimestamp() + 1);
        header.setMaxTimestamp(TimestampType.CREATE_TIME, header.maxTimestamp() - 1);
        return batch;
    }

    @Test
    void aProducerThatClaimsLogAppendTimeGetsInvalidTimestamp() throws Exception {
        // Given
        createTopic("claims-append-time", Map.of("message.timestamp.type", "LogAppendTime"));

        // When
        PartitionProduceResponse response = produce("claims-append-time", batch(Compression.NONE,
                TimestampType.LOG_APPEND_TIME, new SimpleRecord(System.currentTimeMillis(), null, bytes("a"))));

        // Then
        assertThat(Errors.forCode(response.errorCode())).isEqualTo(Errors.INVALID_TIMESTAMP);
        assertThat(response.recordErrors()).singleElement().satisfies(e -> assertThat(e.batchIndexErrorMessage())
                .endsWith("Producer should not set timestamp type to LogAppendTime."));
    }

    @Test
    void aCompressedBatchWithFewerRecordsThanItsCountIsInvalidRecordAndAGarbledOneIsCorrupt() throws Exception {
        // Given
        createTopic("compressed-broken", Map.of());
        long now = System.currentTimeMillis();
        ByteBuffer short1 = batch(Compression.gzip().build(), TimestampType.CREATE_TIME,
                new SimpleRecord(now, null, bytes("a")), new SimpleRecord(now, null, bytes("b")));
        patchInt(short1, 57, 3);
        patchInt(short1, 23, 2);
        ByteBuffer garbled = batch(Compression.gzip().build(), TimestampType.CREATE_TIME,
                new SimpleRecord(now, null, bytes("some value")));
        for (int i = 61; i < garbled.limit(); i++) {
            garbled.put(i, (byte) 0x55);
        }
        patchInt(garbled, 57, 1);

        // When
        PartitionProduceResponse count = produce("compressed-broken", short1);
        PartitionProduceResponse corrupt = produce("compressed-broken", garbled);

        // Then
        assertThat(Errors.forCode(count.errorCode())).isEqualTo(Errors.INVALID_RECORD);
        assertThat(Errors.forCode(corrupt.errorCode())).isEqualTo(Errors.CORRUPT_MESSAGE);
    }

    @Test
    void theMaxTimestampListOffsetsReportsIsTheRecordsNotTheHeaders() throws Exception {
        // Given: a header claiming a max timestamp an hour after its records'
        createTopic("max-timestamp", Map.of());
        long now = System.currentTimeMillis();
        ByteBuffer records = batch(Compression.snappy().build(), TimestampType.CREATE_TIME,
                new SimpleRecord(now - 20, null, bytes("a")), new SimpleRecord(now - 10, null, bytes("b")),
                new SimpleRecord(now - 30, null, bytes("c")));
        MemoryRecords.readableRecords(records.duplicate()).batches().iterator().next()
                .setMaxTimestamp(TimestampType.CREATE_TIME, now + 3_600_000L / 2);

        // When
        PartitionProduceResponse response = produce("max-timestamp", records);
        var listed = admin.listOffsets(Map.of(new TopicPartition("max-timestamp", 0),
                org.apache.kafka.clients.admin.OffsetSpec.maxTimestamp())).all().get(30, TimeUnit.SECONDS);

        // Then
        assertThat(Errors.forCode(response.errorCode())).isEqualTo(Errors.NONE);
        assertThat(listed.get(new TopicPartition("max-timestamp", 0)).timestamp()).isEqualTo(now - 10);
        assertThat(listed.get(new TopicPartition("max-timestamp", 0)).offset()).isEqualTo(1);
    }
}
