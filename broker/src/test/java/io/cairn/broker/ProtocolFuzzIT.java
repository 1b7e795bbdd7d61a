package io.cairn.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.LeakDetection;
import io.cairn.wire.message.RandomRequests;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
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
import org.apache.kafka.common.message.ApiVersionsResponseData.ApiVersion;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.RequestUtils;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
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
 * the requests per (API, version) (default 6). It runs against a plain broker and against one whose authorizer denies
 * the fuzzer everything, which takes every handler through its authorization-failure answer.
 */
@ExtendWith(LeakDetection.class)
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ProtocolFuzzIT {

    private static final String TOPIC = "topic-1";
    private static final int PARTITIONS = 3;
    private static final int REQUESTS = Integer.getInteger("cairn.fuzz.requests", 6);
    private static final int ANSWER_MS = 3_000;
    private static final String CLIENT_ID = "fuzz";
    /** Client ids of every kind a header can carry: none, empty, non-ASCII, quotes and line breaks, long. */
    private static final String[] CLIENT_IDS = {
        null, "", CLIENT_ID, "é日本語\uD83D\uDE00", "quote\"back\\slash", "new\nline\ttab", "x".repeat(1_000),
    };

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
                        Message body = RandomRequests.steered(key, version, random,
                                new RandomRequests.Target(TOPIC, topicId, PARTITIONS));
                        String what = key.name + " v" + version + " #" + i;
                        String outcome;
                        try {
                            outcome = connection.exchange(key, version, ++correlationId, body, what, failures);
                        } catch (RuntimeException e) {
                            throw new AssertionError(what + " (seed " + seed + "): " + RandomRequests.brief(body), e);
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
            String clientId = CLIENT_IDS[Math.floorMod(correlationId * 31, CLIENT_IDS.length)];
            RequestHeader header = new RequestHeader(key, version, clientId, correlationId);
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
                failures.add(what + ": no answer within " + ANSWER_MS + " ms: " + RandomRequests.brief(body));
                return "unanswered";
            } catch (IOException e) {
                await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(
                        logs.warningsSince(mark, ":" + port + " ")).as(what).hasSize(1));
                return "closed";
            }
            RandomRequests.checkAnswer(key, version, correlationId, frame, body, what, failures);
            return "answered";
        }

        void close() throws IOException {
            raw.close();
        }
    }
}
