package io.cairn.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.apache.kafka.common.record.DefaultRecordBatch.CRC_OFFSET;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.LeakDetection;
import io.cairn.wire.message.RandomRequests;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ApiVersionsResponseData.ApiVersion;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.RequestUtils;
import org.apache.kafka.common.requests.ResponseHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.utils.Crc32C;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Random requests that decode, of every API the broker advertises at every version it advertises, against a live
 * broker: each is answered with a response kafka-clients parses, carrying no {@code UNKNOWN_SERVER_ERROR}, or the
 * connection is closed with one WARN line; nothing is logged at ERROR, no stack trace at WARN, no buffer leaks, and
 * the broker serves a stock client afterwards. The values are {@link RandomRequests}' (boundary numbers, null where
 * nullable, short names), steered towards the broker's one topic, its partitions and valid record batches so that the
 * handlers get past their first lookup. {@code -Dcairn.fuzz.seed} repeats a run, {@code -Dcairn.fuzz.requests} sets
 * the requests per (API, version) (default 6). It runs against a plain broker and against one whose authorizer denies the
 * fuzzer everything, which takes every handler through its authorization-failure answer.
 */
@ExtendWith(LeakDetection.class)
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ProtocolFuzzIT {

    private static final String TOPIC = "topic-1";
    private static final int PARTITIONS = 3;
    private static final int REQUESTS = Integer.getInteger("cairn.fuzz.requests", 6);
    private static final int ANSWER_MS = 3_000;
    private static final String CLIENT_ID = "fuzz";
    /** Where a v2 batch's attributes start: the CRC covers the bytes from here on. */
    private static final int ATTRIBUTES_OFFSET = CRC_OFFSET + 4;

    @TempDir
    static Path dataDir;

    private static LogCapture logs;
    private static InProcessBroker broker;
    private static Admin admin;

    /** A broker set up one way: plain, or with an authorizer that denies the anonymous fuzzer everything. */
    enum Setup {
        PLAIN(Map.of()),
        DENY_ALL(Map.of("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                "allow.everyone.if.no.acl.found", "false"));

        private final Map<String, String> overrides;

        Setup(Map<String, String> overrides) {
            this.overrides = overrides;
        }
    }

    @BeforeAll
    static void captureLogs() {
        logs = LogCapture.start();
    }

    @AfterAll
    static void stopCapturing() {
        if (logs != null) {
            logs.close();
        }
    }

    @AfterEach
    void stopBroker() {
        if (admin != null) {
            admin.close();
            admin = null;
        }
        if (broker != null) {
            broker.close();
            broker = null;
        }
    }

    @ParameterizedTest
    @EnumSource(Setup.class)
    void everyApiAnswersRandomWellFormedRequestsOrClosesWithOneWarning(Setup setup) throws Exception {
        // Given
        Map<String, String> overrides = new java.util.HashMap<>(setup.overrides);
        overrides.put("group.initial.rebalance.delay.ms", "0");
        broker = InProcessBroker.start(dataDir.resolve(setup.name()), overrides);
        admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + broker.port()));
        int mark = logs.mark();
        long seed = Long.getLong("cairn.fuzz.seed", System.nanoTime());
        Random random = new Random(seed);
        List<ApiVersion> advertised = advertisedApis();
        Map<String, Integer> outcomes = new TreeMap<>();
        List<String> failures = new ArrayList<>();
        int correlationId = 0;
        Connection connection = new Connection();

        // When
        try {
            for (ApiVersion api : advertised) {
                ApiKeys key = ApiKeys.forId(api.apiKey());
                Uuid topicId = setup == Setup.PLAIN ? ensureTopic() : new Uuid(seed, 1);
                for (short version = api.minVersion(); version <= api.maxVersion(); version++) {
                    for (int i = 0; i < REQUESTS; i++) {
                        Message body = RandomRequests.body(key, version, random);
                        steer(body, body, version, random, topicId);
                        String what = key.name + " v" + version + " #" + i;
                        String outcome;
                        try {
                            outcome = connection.exchange(key, version, ++correlationId, body, what, failures);
                        } catch (RuntimeException e) {
                            throw new AssertionError(what + " (seed " + seed + "): " + brief(body), e);
                        }
                        outcomes.merge(key.name + " " + outcome, 1, Integer::sum);
                        if (!outcome.equals("answered") && !outcome.startsWith("not writable")) {
                            connection.close();
                            connection = new Connection();
                        }
                    }
                }
                if (setup == Setup.PLAIN && (key == ApiKeys.PRODUCE || key == ApiKeys.WRITE_TXN_MARKERS)) {
                    outcomes.merge("records read back after " + key.name, (int) readAll(), Integer::sum);
                }
            }
        } finally {
            connection.close();
        }
        System.out.println("Protocol fuzz (" + setup + "), seed " + seed + ": " + outcomes);

        // Then
        assertThat(failures).as("seed %d", seed).isEmpty();
        assertThat(logs.messagesSince(mark, Level.ERROR)).as("seed %d", seed).isEmpty();
        assertThat(logs.stackTracesAtWarnOrAbove()).as("seed %d", seed).isEmpty();
        assertThat(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS)).hasSize(1);
        if (setup == Setup.PLAIN) {
            ensureTopic();
        }
    }

    /** The APIs and versions the broker's ApiVersions response lists. */
    private static List<ApiVersion> advertisedApis() throws IOException {
        try (RawConnection raw = broker.connect()) {
            raw.sendFrame(KafkaWire.apiVersionsRequest((short) 3, 0));
            return new ArrayList<>(KafkaWire.apiVersionsResponse(raw.readFrame(), (short) 3).body().apiKeys());
        }
    }

    /** Creates the topic when a fuzzed DeleteTopics removed it; returns its id. */
    private static Uuid ensureTopic() throws Exception {
        for (int attempt = 0; ; attempt++) {
            try {
                return admin.describeTopics(List.of(TOPIC)).allTopicNames().get(30, TimeUnit.SECONDS).get(TOPIC)
                        .topicId();
            } catch (java.util.concurrent.ExecutionException e) {
                if (attempt > 20) {
                    throw e;
                }
                try {
                    admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1))).all()
                            .get(30, TimeUnit.SECONDS);
                    broker.awaitHosted(TOPIC, PARTITIONS);
                } catch (java.util.concurrent.ExecutionException retry) {
                    Thread.sleep(100); // the deletion is still under way
                }
            }
        }
    }

    /**
     * Points some of the request's names, ids and partitions at the topic, gives Produce valid batches half the time,
     * and keeps Fetch's long poll short, so that a request reaches past "unknown topic".
     */
    private static void steer(Message root, Object message, short version, Random random, Uuid topicId)
            throws ReflectiveOperationException {
        for (Method getter : message.getClass().getMethods()) {
            if (getter.getParameterCount() != 0 || Modifier.isStatic(getter.getModifiers())
                    || getter.getDeclaringClass() == Object.class || getter.getName().equals("duplicate")) {
                continue;
            }
            Class<?> type = getter.getReturnType();
            if (Message.class.isAssignableFrom(type)) {
                Object nested = getter.invoke(message);
                if (nested != null) {
                    steer(root, nested, version, random, topicId);
                }
            } else if (Collection.class.isAssignableFrom(type)) {
                Object elements = getter.invoke(message);
                if (elements != null) {
                    for (Object element : (Collection<?>) elements) {
                        if (element instanceof Message) {
                            steer(root, element, version, random, topicId);
                        }
                    }
                }
            }
        }
        Steering steering = new Steering(root, message, version, random);
        steering.sometimes("Name", String.class, TOPIC);
        steering.sometimes("Topic", String.class, TOPIC);
        steering.sometimes("TopicName", String.class, TOPIC);
        steering.sometimes("TopicId", Uuid.class, topicId);
        steering.sometimes("PartitionIndex", int.class, random.nextInt(PARTITIONS + 1) - 1);
        steering.sometimes("Partition", int.class, random.nextInt(PARTITIONS + 1) - 1);
        steering.sometimes("MaxWaitMs", int.class, random.nextInt(200));
        if (message instanceof ProduceRequestData produce) {
            produce.setAcks((short) new int[] {-1, 0, 1, produce.acks()}[random.nextInt(4)]);
        }
        if (message instanceof ProduceRequestData.PartitionProduceData partition && random.nextBoolean()) {
            partition.setRecords(validBatch(random));
        }
    }

    /**
     * Kafka's own UNKNOWN_SERVER_ERROR for a client's input: an isolation level other than 0 and 1 fails Fetch and
     * ListOffsets as a whole in Kafka's request parser ({@code IsolationLevel.forId}); Cairn answers the same code.
     */
    private static boolean kafkasOwn(Message body) {
        byte isolation = body instanceof FetchRequestData fetch ? fetch.isolationLevel()
                : body instanceof ListOffsetsRequestData list ? list.isolationLevel() : 0;
        return isolation != 0 && isolation != 1;
    }

    private static String brief(Object message) {
        String text = String.valueOf(message);
        return text.length() <= 600 ? text : text.substring(0, 600) + "...";
    }

    /** Whether any {@code errorCode} field of {@code message} or of a struct in it is {@code code}. */
    private static boolean carriesErrorCode(Object message, short code) throws ReflectiveOperationException {
        for (Method getter : message.getClass().getMethods()) {
            if (getter.getParameterCount() != 0 || Modifier.isStatic(getter.getModifiers())
                    || getter.getDeclaringClass() == Object.class || getter.getName().equals("duplicate")) {
                continue;
            }
            Object value = getter.invoke(message);
            if (getter.getName().equals("errorCode") && value instanceof Short error && error == code) {
                return true;
            }
            if (value instanceof Message nested && nested != message && carriesErrorCode(nested, code)) {
                return true;
            }
            if (value instanceof Collection<?> elements) {
                for (Object element : elements) {
                    if (element instanceof Message && carriesErrorCode(element, code)) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /** Sets a field of one struct half the time, and only where the version has the field. */
    private record Steering(Message root, Object message, short version, Random random) {

        void sometimes(String field, Class<?> type, Object value) throws ReflectiveOperationException {
            if (!random.nextBoolean()) {
                return;
            }
            Method setter;
            Method getter;
            try {
                setter = message.getClass().getMethod("set" + field, type);
                getter = message.getClass().getMethod(Character.toLowerCase(field.charAt(0)) + field.substring(1));
            } catch (NoSuchMethodException e) {
                return;
            }
            Object before = getter.invoke(message);
            setter.invoke(message, value);
            try {
                root.size(new org.apache.kafka.common.protocol.ObjectSerializationCache(), version);
            } catch (org.apache.kafka.common.errors.UnsupportedVersionException e) {
                setter.invoke(message, before); // not a field of this version
            }
        }
    }

    /** A batch the validator accepts, or one it rejects for its producer state or flags. */
    private static MemoryRecords validBatch(Random random) {
        Compression compression = switch (random.nextInt(4)) {
            case 0 -> Compression.gzip().build();
            case 1 -> Compression.lz4().build();
            case 2 -> Compression.zstd().build();
            default -> Compression.NONE;
        };
        SimpleRecord[] records = new SimpleRecord[1 + random.nextInt(3)];
        for (int i = 0; i < records.length; i++) {
            records[i] = new SimpleRecord(System.currentTimeMillis(), ("k" + i).getBytes(),
                    ("value-" + random.nextInt()).getBytes());
        }
        long producerId = random.nextInt(3) == 0 ? RecordBatch.NO_PRODUCER_ID : random.nextInt(5);
        short epoch = (short) (producerId < 0 ? RecordBatch.NO_PRODUCER_EPOCH : random.nextInt(3));
        int sequence = producerId < 0 ? RecordBatch.NO_SEQUENCE : random.nextInt(4);
        boolean transactional = producerId >= 0 && random.nextBoolean();
        MemoryRecords batch = MemoryRecords.withRecords(RecordBatch.CURRENT_MAGIC_VALUE, 0L, compression,
                org.apache.kafka.common.record.TimestampType.CREATE_TIME, producerId, epoch, sequence,
                RecordBatch.NO_PARTITION_LEADER_EPOCH, transactional, records);
        if (random.nextInt(3) == 0) {
            // Bytes changed past the CRC's start and the CRC fixed up, so that they reach the validator.
            ByteBuffer bytes = batch.buffer();
            for (int i = 1 + random.nextInt(3); i > 0; i--) {
                int at = ATTRIBUTES_OFFSET + random.nextInt(bytes.limit() - ATTRIBUTES_OFFSET);
                bytes.put(at, (byte) random.nextInt(256));
            }
            bytes.putInt(CRC_OFFSET, (int) Crc32C.compute(bytes, ATTRIBUTES_OFFSET, bytes.limit() - ATTRIBUTES_OFFSET));
        }
        return batch;
    }

    /**
     * Reads every partition of the topic from its start to its end with a stock consumer (which checks each batch's
     * CRC and decodes every record): whatever the fuzzed produce requests got into the log is readable.
     */
    private static long readAll() throws Exception {
        Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + broker.port(),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest", ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        long read = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++) {
                partitions.add(new TopicPartition(TOPIC, p));
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))) {
                assertThat(System.nanoTime()).as("read to the end in 30 s").isLessThan(deadline);
                read += consumer.poll(Duration.ofMillis(200)).count();
            }
        }
        return read;
    }

    /** One connection to the broker; replaced after it closes or a request goes unanswered. */
    private static final class Connection {

        private final RawConnection raw;

        Connection() throws IOException {
            raw = broker.connect();
        }

        /**
         * Sends one request and classifies what came back: "answered", "closed" (with its one WARN) or "unanswered";
         * adds to {@code failures} what breaks the rules.
         */
        String exchange(ApiKeys key, short version, int correlationId, Message body, String what,
                List<String> failures) throws Exception {
            RequestHeader header = new RequestHeader(key, version, CLIENT_ID, correlationId);
            ByteBuffer request;
            try {
                request = RequestUtils.serialize(header.data(), header.headerVersion(), body, version);
            } catch (org.apache.kafka.common.errors.UnsupportedVersionException e) {
                return "not writable by kafka-clients"; // Produce v0-2: advertised for old clients, never sent
            }
            int mark = logs.mark();
            int port = raw.localPort();
            raw.sendFrame(request);
            if (body instanceof ProduceRequestData produce && produce.acks() == 0) {
                // No response to acks=0 (the broker closes on an error): ask ApiVersions behind it.
                key = ApiKeys.API_VERSIONS;
                version = 3;
                RequestHeader probe = new RequestHeader(key, version, CLIENT_ID, correlationId);
                raw.sendFrame(RequestUtils.serialize(probe.data(), probe.headerVersion(),
                        new org.apache.kafka.common.message.ApiVersionsRequestData(), version));
            }
            ByteBuffer frame;
            try {
                frame = raw.readFrameWithin(ANSWER_MS);
            } catch (java.net.SocketTimeoutException e) {
                failures.add(what + ": no answer within " + ANSWER_MS + " ms: " + brief(body));
                return "unanswered";
            } catch (IOException e) {
                await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(
                        logs.warningsSince(mark, ":" + port + " ")).as(what).hasSize(1));
                return "closed";
            }
            ResponseHeader responseHeader = ResponseHeader.parse(frame, key.responseHeaderVersion(version));
            if (responseHeader.correlationId() != correlationId) {
                failures.add(what + ": correlation id " + responseHeader.correlationId());
                return "unanswered";
            }
            AbstractResponse response;
            try {
                response = AbstractResponse.parseResponse(key, new ByteBufferAccessor(frame), version);
            } catch (RuntimeException e) {
                failures.add(what + ": kafka-clients cannot parse the response: " + e);
                return "answered";
            }
            if (frame.hasRemaining()) {
                failures.add(what + ": " + frame.remaining() + " bytes after the response body");
            }
            if (carriesErrorCode(response.data(), Errors.UNKNOWN_SERVER_ERROR.code()) && !kafkasOwn(body)) {
                failures.add(what + ": UNKNOWN_SERVER_ERROR for " + brief(body) + " -> " + brief(response.data()));
            }
            return "answered";
        }

        void close() throws IOException {
            raw.close();
        }
    }
}
