package io.cairn.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.testkit.LeakDetection;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.FetchRequestData;
import io.cairn.wire.message.RequestHeaderData;
import io.cairn.wire.protocol.ByteBufAccessor;
import io.cairn.wire.protocol.SerializationCache;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.ResponseHeader;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fetch over real sockets against an in-process broker: kafka-clients' consumer (assign + seek) reading what its
 * producer wrote, the long poll woken by appends, incremental fetch sessions across many polls, offsets out of
 * range, and raw requests (encoded by Cairn's codec, decoded by kafka-clients) for session and topic-id details.
 */
@ExtendWith(LeakDetection.class)
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class FetchIT {

    @TempDir
    static Path dataDir;

    private static LogCapture logs;
    private static InProcessBroker broker;
    private static Admin admin;
    private static KafkaProducer<String, String> producer;
    private static int correlationId;

    @BeforeAll
    static void startBroker() throws Exception {
        logs = LogCapture.start();
        broker = InProcessBroker.start(dataDir, Map.of());
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        admin = Admin.create(props);
        Properties producerProps = new Properties();
        producerProps.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        producerProps.put(ProducerConfig.ACKS_CONFIG, "1");
        producerProps.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        producerProps.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        producer = new KafkaProducer<>(producerProps, new StringSerializer(), new StringSerializer());
    }

    @AfterAll
    static void stopBroker() {
        producer.close();
        admin.close();
        broker.close();
        logs.close();
    }

    private static String bootstrap() {
        return "127.0.0.1:" + broker.port();
    }

    private static Uuid createTopic(String name, int partitions) throws Exception {
        return admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).topicId(name)
            .get(30, TimeUnit.SECONDS);
    }

    private static KafkaConsumer<String, String> consumer(Map<String, Object> overrides) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
        props.putAll(overrides);
        return new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer());
    }

    private static void send(String topic, int partition, String value) throws Exception {
        producer.send(new ProducerRecord<>(topic, partition, null, value)).get(30, TimeUnit.SECONDS);
    }

    private static List<ConsumerRecord<String, String>> pollUntil(KafkaConsumer<String, String> consumer, int count) {
        List<ConsumerRecord<String, String>> received = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (received.size() < count && System.nanoTime() < deadline) {
            consumer.poll(Duration.ofMillis(500)).forEach(received::add);
        }
        return received;
    }

    @Test
    void aConsumerReadsBackWhatTheProducerWroteInOrderPerPartition() throws Exception {
        // Given
        createTopic("readback", 3);
        List<Future<?>> sent = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            sent.add(producer.send(new ProducerRecord<>("readback", i % 3, "k" + i, "v" + i)));
        }
        for (Future<?> f : sent) {
            f.get(30, TimeUnit.SECONDS);
        }
        List<TopicPartition> partitions = List.of(new TopicPartition("readback", 0),
            new TopicPartition("readback", 1), new TopicPartition("readback", 2));

        // When
        List<ConsumerRecord<String, String>> received;
        try (KafkaConsumer<String, String> consumer = consumer(Map.of(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 100,
                ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 4096))) {
            consumer.assign(partitions);
            partitions.forEach(tp -> consumer.seek(tp, 0));
            received = pollUntil(consumer, 3000);
        }

        // Then
        assertThat(received).hasSize(3000);
        for (int p = 0; p < 3; p++) {
            int partition = p;
            List<ConsumerRecord<String, String>> ofPartition = received.stream()
                .filter(r -> r.partition() == partition).toList();
            assertThat(ofPartition).hasSize(1000);
            for (int i = 0; i < 1000; i++) {
                assertThat(ofPartition.get(i).offset()).isEqualTo(i);
                assertThat(ofPartition.get(i).value()).isEqualTo("v" + (i * 3 + partition));
                assertThat(ofPartition.get(i).key()).isEqualTo("k" + (i * 3 + partition));
            }
        }
        assertThat(logs.messages(Level.INFO, m -> m.contains("unable to process the fetch request"))).isEmpty();
    }

    @Test
    void aConsumerAtTheLogEndWakesOnTheNextAppendWithoutWaitingOutMaxWait() throws Exception {
        // Given
        createTopic("longpoll", 1);
        send("longpoll", 0, "first");
        BlockingQueue<ConsumerRecord<String, String>> received = new LinkedBlockingQueue<>();
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService pollThread = Executors.newSingleThreadExecutor();
        Future<?> polling = pollThread.submit(() -> {
            KafkaConsumer<String, String> consumer = consumer(Map.of(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 60_000));
            try {
                TopicPartition tp = new TopicPartition("longpoll", 0);
                consumer.assign(List.of(tp));
                consumer.seek(tp, 1);
                while (!stop.get()) {
                    consumer.poll(Duration.ofMillis(200)).forEach(received::add);
                }
            } finally {
                // Its last fetch waits up to fetch.max.wait.ms on the connection (as on Kafka): do not wait for it.
                consumer.close(CloseOptions.timeout(Duration.ZERO));
            }
        });
        List<Long> latenciesMs = new ArrayList<>();

        // When
        try {
            for (int round = 0; round < 5; round++) {
                long start = System.nanoTime();
                send("longpoll", 0, "round-" + round);
                ConsumerRecord<String, String> record = received.poll(50, TimeUnit.SECONDS);
                latenciesMs.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
                assertThat(record).isNotNull();
                assertThat(record.value()).isEqualTo("round-" + round);
            }
        } finally {
            stop.set(true);
            polling.get(30, TimeUnit.SECONDS);
            pollThread.shutdown();
        }

        // Then
        assertThat(latenciesMs).allMatch(ms -> ms < 5_000, "each round well below fetch.max.wait.ms (60 s)");
    }

    @Test
    void aSeekBeyondTheLogEndIsOutOfRangeForAConsumerWithoutReset() throws Exception {
        // Given
        createTopic("outofrange", 1);
        send("outofrange", 0, "only");
        TopicPartition tp = new TopicPartition("outofrange", 0);

        try (KafkaConsumer<String, String> consumer = consumer(Map.of())) {
            consumer.assign(List.of(tp));
            consumer.seek(tp, 1000);

            // When / Then
            assertThatThrownBy(() -> {
                for (int i = 0; i < 100; i++) {
                    consumer.poll(Duration.ofMillis(200));
                }
            }).isInstanceOf(OffsetOutOfRangeException.class);
        }
    }

    @Test
    void aSeekBeyondTheLogEndIsResetToTheEarliestOffsetByTheConsumer() throws Exception {
        // Given
        createTopic("reset", 1);
        send("reset", 0, "first");
        send("reset", 0, "second");
        TopicPartition tp = new TopicPartition("reset", 0);

        try (KafkaConsumer<String, String> consumer = consumer(Map.of(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                "earliest"))) {
            consumer.assign(List.of(tp));
            consumer.seek(tp, 1000);

            // When
            List<ConsumerRecord<String, String>> received = pollUntil(consumer, 2);

            // Then
            assertThat(received).extracting(ConsumerRecord::value).containsExactly("first", "second");
            assertThat(received).extracting(ConsumerRecord::offset).containsExactly(0L, 1L);
        }
    }

    @Test
    void anIncrementalFetchOmitsPartitionsWithNothingNewAndReturnsTheOneThatGrew() throws Exception {
        // Given
        Uuid id = createTopic("sessions", 2);
        send("sessions", 0, "a");
        send("sessions", 1, "b");
        try (RawConnection connection = broker.connect()) {
            FetchRequestData full = fetchRequest(id, 0, 0);
            full.topics().get(0).partitions().add(partition(0, 1));
            full.topics().get(0).partitions().add(partition(1, 1));
            FetchResponseData created = fetch(connection, full, (short) 17);
            assertThat(created.sessionId()).isPositive();
            assertThat(partitionIndexes(created)).containsExactly(0, 1);
            FetchResponseData unchanged = fetch(connection, fetchRequest(id, created.sessionId(), 1), (short) 17);
            assertThat(unchanged.responses()).isEmpty();
            send("sessions", 1, "c");

            // When
            FetchResponseData grown = fetch(connection, fetchRequest(id, created.sessionId(), 2), (short) 17);

            // Then
            assertThat(grown.errorCode()).isEqualTo(Errors.NONE.code());
            assertThat(grown.sessionId()).isEqualTo(created.sessionId());
            assertThat(partitionIndexes(grown)).containsExactly(1);
            FetchResponseData.PartitionData partition = grown.responses().get(0).partitions().get(0);
            assertThat(partition.highWatermark()).isEqualTo(2);
            assertThat(values(partition)).containsExactly("c");
            FetchResponseData stale = fetch(connection, fetchRequest(id, created.sessionId(), 2), (short) 17);
            assertThat(stale.errorCode()).isEqualTo(Errors.INVALID_FETCH_SESSION_EPOCH.code());
        }
    }

    @Test
    void aFetchForAnUnknownTopicIdGetsUnknownTopicId() throws Exception {
        // Given
        Uuid unknown = Uuid.randomUuid();
        FetchRequestData request = fetchRequest(unknown, 0, -1);
        request.topics().get(0).partitions().add(partition(0, 0));

        try (RawConnection connection = broker.connect()) {
            // When
            FetchResponseData response = fetch(connection, request, (short) 18);

            // Then
            assertThat(response.responses()).hasSize(1);
            assertThat(response.responses().get(0).topicId()).isEqualTo(unknown);
            assertThat(response.responses().get(0).partitions().get(0).errorCode())
                .isEqualTo(Errors.UNKNOWN_TOPIC_ID.code());
        }
    }

    private static FetchRequestData fetchRequest(Uuid topicId, int sessionId, int epoch) {
        FetchRequestData request = new FetchRequestData().setMaxWaitMs(0).setMinBytes(1).setMaxBytes(1 << 20)
            .setSessionId(sessionId).setSessionEpoch(epoch);
        request.topics().add(new FetchRequestData.FetchTopic().setTopicId(
            new io.cairn.wire.protocol.Uuid(topicId.getMostSignificantBits(), topicId.getLeastSignificantBits())));
        if (epoch > 0) {
            request.topics().clear();
        }
        return request;
    }

    private static FetchRequestData.FetchPartition partition(int index, long offset) {
        return new FetchRequestData.FetchPartition().setPartition(index).setFetchOffset(offset)
            .setPartitionMaxBytes(1 << 20).setCurrentLeaderEpoch(-1).setLogStartOffset(-1);
    }

    private static FetchResponseData fetch(RawConnection connection, FetchRequestData body, short version)
            throws Exception {
        int id = ++correlationId;
        RequestHeaderData header = new RequestHeaderData().setRequestApiKey(ApiKey.FETCH.id())
            .setRequestApiVersion(version).setCorrelationId(id).setClientId("fetch-it");
        short headerVersion = ApiKey.FETCH.requestHeaderVersion(version);
        SerializationCache cache = new SerializationCache();
        int size = header.size(cache, headerVersion) + body.size(cache, version);
        ByteBuf buf = Unpooled.buffer(size);
        try {
            ByteBufAccessor out = new ByteBufAccessor(buf);
            header.write(out, cache, headerVersion);
            body.write(out, cache, version);
            connection.sendFrame(buf.nioBuffer());
        } finally {
            buf.release();
        }
        ByteBuffer payload = connection.readFrame();
        ResponseHeader responseHeader = ResponseHeader.parse(payload, ApiKeys.FETCH.responseHeaderVersion(version));
        assertThat(responseHeader.correlationId()).isEqualTo(id);
        return FetchResponse.parse(new ByteBufferAccessor(payload), version).data();
    }

    private static List<Integer> partitionIndexes(FetchResponseData response) {
        return response.responses().stream().flatMap(t -> t.partitions().stream())
            .map(FetchResponseData.PartitionData::partitionIndex).toList();
    }

    private static List<String> values(FetchResponseData.PartitionData partition) {
        List<String> values = new ArrayList<>();
        for (RecordBatch batch : ((MemoryRecords) FetchResponse.recordsOrFail(partition)).batches()) {
            for (Record record : batch) {
                values.add(StandardCharsets.UTF_8.decode(record.value()).toString());
            }
        }
        return values;
    }
}
