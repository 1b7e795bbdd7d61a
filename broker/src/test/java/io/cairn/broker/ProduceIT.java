package io.cairn.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.handler.TopicConfigDefaults;
import io.cairn.isr.LogConfigs;
import io.cairn.log.FetchDataInfo;
import io.cairn.log.LogManager;
import io.cairn.log.PartitionLog;
import io.cairn.log.Time;
import io.cairn.testkit.LeakDetection;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.message.ApiVersionsResponseData.ApiVersion;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.message.ProduceResponseData.PartitionProduceResponse;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;
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
 * Produce over real sockets against an in-process broker: kafka-clients' producer with every acks setting and
 * compression type, and raw frames (encoded by kafka-clients) for the error cases a well-behaved producer never
 * sends. What the log holds is read back from its files once the broker is stopped.
 */
@ExtendWith(LeakDetection.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ProduceIT {

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

    private static void createTopic(String name, int partitions, Map<String, String> configs) throws Exception {
        admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1).configs(configs))).all()
                .get(30, TimeUnit.SECONDS);
        broker.awaitHosted(name, partitions);
    }

    private static KafkaProducer<byte[], byte[]> producer(String acks, String compression) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        props.put(ProducerConfig.ACKS_CONFIG, acks);
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        props.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, compression);
        props.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "30000");
        return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @ParameterizedTest(name = "compression {0}")
    @ValueSource(strings = {"none", "gzip", "snappy", "lz4", "zstd"})
    void theJavaProducerWithAcksAllGetsConsecutiveOffsetsPerPartition(String compression) throws Exception {
        // Given
        String topic = "compressed-" + compression;
        createTopic(topic, 3, Map.of());
        List<Future<RecordMetadata>> sent = new ArrayList<>();

        // When
        try (KafkaProducer<byte[], byte[]> producer = producer("all", compression)) {
            for (int i = 0; i < 300; i++) {
                sent.add(producer.send(new ProducerRecord<>(topic, i % 3, bytes("key-" + i), bytes("value-" + i))));
            }
            producer.flush();
        }

        // Then
        long[] next = new long[3];
        for (Future<RecordMetadata> future : sent) {
            RecordMetadata metadata = future.get(30, TimeUnit.SECONDS);
            assertThat(metadata.offset()).as("offset in partition %d", metadata.partition())
                    .isEqualTo(next[metadata.partition()]++);
        }
        assertThat(next).containsExactly(100, 100, 100);
    }

    @ParameterizedTest(name = "acks={0}")
    @ValueSource(strings = {"0", "1", "all"})
    void everyAcksSettingAppendsEveryRecord(String acks) throws Exception {
        // Given
        String topic = "acks-" + acks;
        createTopic(topic, 1, Map.of());

        // When
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer = producer(acks, "none")) {
            for (int i = 0; i < 50; i++) {
                sent.add(producer.send(new ProducerRecord<>(topic, 0, bytes("k" + i), bytes("v" + i))));
            }
            producer.flush();
        }
        RecordMetadata probe;
        try (KafkaProducer<byte[], byte[]> producer = producer("1", "none")) {
            probe = producer.send(new ProducerRecord<>(topic, 0, null, bytes("probe"))).get(30, TimeUnit.SECONDS);
        }

        // Then
        for (int i = 0; i < sent.size(); i++) {
            assertThat(sent.get(i).get(30, TimeUnit.SECONDS).offset()).isEqualTo("0".equals(acks) ? -1L : i);
        }
        assertThat(probe.offset()).isEqualTo(50);
    }

    @Test
    void whatTheProducerSentIsWhatTheLogHolds(@TempDir Path dir) throws Exception {
        // Given
        InProcessBroker own = InProcessBroker.start(dir, Map.of());
        long timestamp = 1_700_000_000_000L + 123;
        try (Admin ownAdmin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                "127.0.0.1:" + own.port()))) {
            ownAdmin.createTopics(List.of(new NewTopic("contents", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            Properties props = new Properties();
            props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + own.port());
            props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
            props.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "gzip");
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props, new ByteArraySerializer(),
                    new ByteArraySerializer())) {
                // When
                List<Future<RecordMetadata>> sent = new ArrayList<>();
                for (int i = 0; i < 20; i++) {
                    sent.add(producer.send(new ProducerRecord<>("contents", 0, timestamp + i, bytes("key-" + i),
                            bytes("value-" + i), List.of(new RecordHeader("h", bytes("header-" + i))))));
                    if (i % 7 == 6) {
                        producer.flush();
                    }
                }
                producer.flush();
                for (int i = 0; i < sent.size(); i++) {
                    assertThat(sent.get(i).get(30, TimeUnit.SECONDS).offset()).isEqualTo(i);
                }
            }
        } finally {
            own.close();
        }

        // Then
        List<Record> records = readLog(dir, "contents", 0);
        assertThat(records).hasSize(20);
        for (int i = 0; i < 20; i++) {
            Record record = records.get(i);
            String header = "header-" + i;
            assertThat(record.offset()).isEqualTo(i);
            assertThat(record.timestamp()).isEqualTo(timestamp + i);
            assertThat(utf8(record.key())).isEqualTo("key-" + i);
            assertThat(utf8(record.value())).isEqualTo("value-" + i);
            assertThat(record.headers()).singleElement().satisfies(h -> {
                assertThat(h.key()).isEqualTo("h");
                assertThat(new String(h.value(), StandardCharsets.UTF_8)).isEqualTo(header);
            });
        }
    }

    private static String utf8(ByteBuffer buffer) {
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /**
     * The records of a stopped broker's partition, read from its segment files and decoded by kafka-clients (a read
     * returns one segment's batches at most, as in Kafka).
     */
    private static List<Record> readLog(Path dir, String topic, int partition) {
        LogManager manager = LogManager.start(dir, LogConfigs.toLogConfig(TopicConfigDefaults.defaults()), Time.SYSTEM,
                LogManager.Options.defaults());
        try {
            PartitionLog log = manager.getLog(topic, partition).orElseThrow();
            List<Record> all = new ArrayList<>();
            long next = log.logStartOffset();
            while (next < log.logEndOffset()) {
                FetchDataInfo info = log.read(next, 1 << 20, Long.MAX_VALUE, true);
                try {
                    MemoryRecords records = MemoryRecords.readableRecords(info.records().readBytes());
                    for (RecordBatch batch : records.batches()) {
                        batch.ensureValid();
                        batch.forEach(all::add);
                        next = batch.nextOffset();
                    }
                } finally {
                    info.close();
                }
            }
            return all;
        } finally {
            manager.close();
        }
    }

    // Raw frames

    private static MemoryRecords records(long producerId, short epoch, int sequence, byte[]... keys) {
        SimpleRecord[] records = new SimpleRecord[keys.length];
        for (int i = 0; i < keys.length; i++) {
            records[i] = new SimpleRecord(System.currentTimeMillis(), keys[i], bytes("value-" + i));
        }
        return MemoryRecords.withIdempotentRecords(Compression.NONE, producerId, epoch, sequence, records);
    }

    private static MemoryRecords records(byte[]... keys) {
        SimpleRecord[] records = new SimpleRecord[keys.length];
        for (int i = 0; i < keys.length; i++) {
            records[i] = new SimpleRecord(System.currentTimeMillis(), keys[i], bytes("value-" + i));
        }
        return MemoryRecords.withRecords(Compression.NONE, records);
    }

    private static ByteBuffer produceFrame(short version, short acks, String topic, MemoryRecords records) {
        ProduceRequestData data = new ProduceRequestData().setAcks(acks).setTimeoutMs(30_000);
        ProduceRequestData.TopicProduceData topicData = new ProduceRequestData.TopicProduceData().setName(topic);
        topicData.partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(records));
        data.topicData().add(topicData);
        RequestHeader header = new RequestHeader(ApiKeys.PRODUCE, version, KafkaWire.CLIENT_ID, ++correlationId);
        ByteBuffer headerBytes = MessageUtil.toByteBufferAccessor(header.data(), header.headerVersion()).buffer();
        ByteBuffer body = MessageUtil.toByteBufferAccessor(data, version).buffer();
        ByteBuffer frame = ByteBuffer.allocate(headerBytes.remaining() + body.remaining());
        frame.put(headerBytes).put(body).flip();
        return frame;
    }

    private static PartitionProduceResponse produceRaw(RawConnection connection, short version, String topic,
                                                       MemoryRecords records) throws IOException {
        connection.sendFrame(produceFrame(version, (short) -1, topic, records));
        ByteBuffer payload = connection.readFrame();
        ResponseHeader header = ResponseHeader.parse(payload, ApiKeys.PRODUCE.responseHeaderVersion(version));
        assertThat(header.correlationId()).isEqualTo(correlationId);
        ProduceResponseData response = new ProduceResponseData(new ByteBufferAccessor(payload), version);
        assertThat(payload.remaining()).isZero();
        assertThat(response.responses()).hasSize(1);
        return response.responses().iterator().next().partitionResponses().get(0);
    }

    @Test
    void rawBatchesWithACorruptCrcOrAWrongCountAreRefusedAndTheConnectionStaysUsable() throws Exception {
        // Given
        createTopic("raw-bad", 1, Map.of());
        MemoryRecords corrupt = records(bytes("a"), bytes("b"));
        ByteBuffer corruptBytes = corrupt.buffer();
        corruptBytes.put(corruptBytes.limit() - 1, (byte) (corruptBytes.get(corruptBytes.limit() - 1) ^ 0x7f));
        MemoryRecords wrongCount = records(bytes("a"), bytes("b"), bytes("c"));
        // The v2 header's record count is at byte 57; changing the max timestamp makes kafka-clients redo the CRC.
        wrongCount.buffer().putInt(57, 2);
        org.apache.kafka.common.record.MutableRecordBatch header = wrongCount.batches().iterator().next();
        header.setMaxTimestamp(TimestampType.CREATE_TIME, header.maxTimestamp() + 1);

        try (RawConnection connection = broker.connect()) {
            // When
            PartitionProduceResponse crc = produceRaw(connection, (short) 11, "raw-bad", corrupt);
            PartitionProduceResponse count = produceRaw(connection, (short) 11, "raw-bad", wrongCount);
            PartitionProduceResponse good = produceRaw(connection, (short) 11, "raw-bad", records(bytes("ok")));

            // Then
            assertThat(Errors.forCode(crc.errorCode())).isEqualTo(Errors.CORRUPT_MESSAGE);
            assertThat(Errors.forCode(count.errorCode())).isEqualTo(Errors.INVALID_RECORD);
            assertThat(Errors.forCode(good.errorCode())).isEqualTo(Errors.NONE);
            assertThat(good.baseOffset()).isZero();
        }
    }

    @Test
    void anOversizedBatchIsMessageTooLarge() throws Exception {
        // Given
        createTopic("raw-small", 1, Map.of("max.message.bytes", "1024"));
        MemoryRecords big = MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(bytes("k"), new byte[4096]));

        try (RawConnection connection = broker.connect()) {
            // When
            PartitionProduceResponse response = produceRaw(connection, (short) 9, "raw-small", big);

            // Then
            assertThat(Errors.forCode(response.errorCode())).isEqualTo(Errors.MESSAGE_TOO_LARGE);
            assertThat(response.baseOffset()).isEqualTo(-1L);
        }
    }

    @Test
    void keylessRecordsOnACompactedTopicGetRecordErrors() throws Exception {
        // Given
        createTopic("raw-compacted", 1, Map.of("cleanup.policy", "compact"));

        try (RawConnection connection = broker.connect()) {
            // When
            PartitionProduceResponse response = produceRaw(connection, (short) 8, "raw-compacted",
                    records(bytes("a"), null));

            // Then
            assertThat(Errors.forCode(response.errorCode())).isEqualTo(Errors.INVALID_RECORD);
            assertThat(response.recordErrors()).singleElement().satisfies(e -> {
                assertThat(e.batchIndex()).isEqualTo(1);
                assertThat(e.batchIndexErrorMessage()).isEqualTo("Compacted topic cannot accept message without key in "
                        + "topic partition raw-compacted-0");
            });
            assertThat(response.errorMessage()).startsWith("One or more records have been rejected due to 1 record");
        }
    }

    @Test
    void anIdempotentRetryGetsTheOriginalOffsetAndASequenceGapIsOutOfOrder() throws Exception {
        // Given
        createTopic("raw-idempotent", 1, Map.of());

        try (RawConnection connection = broker.connect()) {
            produceRaw(connection, (short) 11, "raw-idempotent", records(bytes("x")));
            PartitionProduceResponse first = produceRaw(connection, (short) 11, "raw-idempotent",
                    records(1000L, (short) 0, 0, bytes("a"), bytes("b")));

            // When
            PartitionProduceResponse retry = produceRaw(connection, (short) 11, "raw-idempotent",
                    records(1000L, (short) 0, 0, bytes("a"), bytes("b")));
            PartitionProduceResponse gap = produceRaw(connection, (short) 11, "raw-idempotent",
                    records(1000L, (short) 0, 7, bytes("c")));
            PartitionProduceResponse next = produceRaw(connection, (short) 11, "raw-idempotent",
                    records(1000L, (short) 0, 2, bytes("c")));

            // Then
            assertThat(first.baseOffset()).isEqualTo(1);
            assertThat(Errors.forCode(retry.errorCode())).isEqualTo(Errors.NONE);
            assertThat(retry.baseOffset()).isEqualTo(1);
            assertThat(Errors.forCode(gap.errorCode())).isEqualTo(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER);
            assertThat(next.baseOffset()).isEqualTo(3);
        }
    }

    @Test
    void apiVersionsAdvertisesProduceFromV0ButAV2RequestClosesTheConnectionAsKafka411Does() throws Exception {
        // Given
        createTopic("raw-v2", 1, Map.of());
        ApiVersion produce;
        try (RawConnection connection = broker.connect()) {
            connection.sendFrame(KafkaWire.apiVersionsRequest((short) 3, 1));
            produce = KafkaWire.apiVersionsResponse(connection.readFrame(), (short) 3).body().apiKeys()
                    .find(ApiKeys.PRODUCE.id);
        }
        ByteBuffer v2 = ByteBuffer.allocate(64);
        v2.putShort(ApiKeys.PRODUCE.id).putShort((short) 2).putInt(5);
        v2.putShort((short) 4).put(bytes("test"));
        v2.putShort((short) 1).putInt(1000).putInt(0).flip();

        try (RawConnection connection = broker.connect()) {
            // When
            connection.sendFrame(v2);

            // Then
            assertThat(connection.closedByServer()).isTrue();
        }
        assertThat(produce.minVersion()).isZero();
        assertThat(produce.maxVersion()).isEqualTo((short) 13);
    }

    @Test
    void anAcksZeroProduceThatFailsClosesTheConnection() throws Exception {
        try (RawConnection connection = broker.connect()) {
            // When
            connection.sendFrame(produceFrame((short) 9, (short) 0, "no-such-topic-acks0", records(bytes("a"))));

            // Then
            assertThat(connection.closedByServer()).isTrue();
        }
    }
}
