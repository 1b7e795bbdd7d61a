package io.cairn.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.cairn.isr.Partition;
import io.cairn.log.PartitionLogLock;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.testkit.LeakDetection;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Network threads never wait for a partition: with one event loop for every connection, requests blocked on a real
 * partition's lock wait on the request-handler threads while the other connections' ApiVersions and Metadata are
 * answered; and the request-handler and network threads end with the server. A listener's own
 * {@code listener.name.<l>.num.network.threads} sizes its network threads, live.
 */
@ExtendWith(LeakDetection.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RequestHandlerPoolIT {

    private static final String HANDLER_THREAD_PREFIX = "data-plane-kafka-request-handler-";
    private static final Duration ANSWER_BOUND = Duration.ofSeconds(5);
    private static final short PRODUCE_VERSION = 9;
    private static final short FETCH_VERSION = 12;
    private static final short METADATA_VERSION = 12;

    @TempDir
    Path dataDir;

    @Test
    void shouldAnswerApiVersionsAndMetadataOnTheSameEventLoopWhileRequestsWaitForAPartitionLock() throws Exception {
        // Given: one network thread, so every connection shares its event loop.
        try (InProcessBroker broker = InProcessBroker.start(dataDir,
                Map.of("num.network.threads", "1", "num.io.threads", "2"))) {
            Partition partition = createTopic(broker, "locked");
            ReentrantLock lock = PartitionLogLock.of(partition.log());
            try (RawConnection producer = broker.connect(); RawConnection consumer = broker.connect();
                    RawConnection other = broker.connect()) {
                lock.lock();
                try {
                    producer.sendFrame(frame(ApiKeys.PRODUCE, PRODUCE_VERSION, 1, produce("locked")));
                    consumer.sendFrame(frame(ApiKeys.FETCH, FETCH_VERSION, 2, readCommittedFetch("locked")));
                    await().atMost(Duration.ofSeconds(10)).until(() -> lock.getQueueLength() == 2);

                    // When
                    other.sendFrame(KafkaWire.apiVersionsRequest((short) 3, 3));
                    ByteBuffer apiVersions = assertTimeoutPreemptively(ANSWER_BOUND, other::readFrame);
                    other.sendFrame(frame(ApiKeys.METADATA, METADATA_VERSION, 4,
                            new MetadataRequestData().setTopics(List.of(
                                    new MetadataRequestData.MetadataRequestTopic().setName("locked")))));
                    ByteBuffer metadata = assertTimeoutPreemptively(ANSWER_BOUND, other::readFrame);

                    // Then
                    assertThat(KafkaWire.apiVersionsResponse(apiVersions, (short) 3).body().errorCode()).isZero();
                    MetadataResponseData topics = new MetadataResponseData(body(metadata, ApiKeys.METADATA,
                            METADATA_VERSION, 4), METADATA_VERSION);
                    assertThat(topics.topics().find("locked").errorCode()).isEqualTo(Errors.NONE.code());
                    assertThat(producer.hasUnreadBytes()).isFalse();
                    assertThat(consumer.hasUnreadBytes()).isFalse();
                } finally {
                    lock.unlock();
                }
                ProduceResponseData produced = new ProduceResponseData(body(producer.readFrame(), ApiKeys.PRODUCE,
                        PRODUCE_VERSION, 1), PRODUCE_VERSION);
                ProduceResponseData.PartitionProduceResponse appended = produced.responses().iterator().next()
                        .partitionResponses().get(0);
                assertThat(appended.errorCode()).isEqualTo(Errors.NONE.code());
                assertThat(appended.baseOffset()).isZero();
                FetchResponseData fetched = new FetchResponseData(body(consumer.readFrame(), ApiKeys.FETCH,
                        FETCH_VERSION, 2), FETCH_VERSION);
                assertThat(fetched.errorCode()).isEqualTo(Errors.NONE.code());
                assertThat(fetched.responses().get(0).partitions().get(0).errorCode())
                        .isEqualTo(Errors.NONE.code());
            }
        }
    }

    @Test
    void shouldEndEveryRequestHandlerNetworkAndProduceAcksThreadWhenTheServerCloses() throws Exception {
        // Given: only the threads this broker starts count (other tests of the JVM may leave theirs).
        Set<Thread> before = Set.copyOf(Thread.getAllStackTraces().keySet());
        InProcessBroker broker = InProcessBroker.start(dataDir, Map.of("num.io.threads", "3"));
        try {
            createTopic(broker, "closing");
            try (RawConnection connection = broker.connect()) {
                for (int i = 0; i < 3; i++) {
                    connection.sendFrame(frame(ApiKeys.PRODUCE, PRODUCE_VERSION, i, produce("closing")
                            .setAcks((short) -1)));
                    connection.readFrame();
                }
            }
            assertThat(newThreads(before, HANDLER_THREAD_PREFIX)).isPositive();
            assertThat(newThreads(before, "kafka-scheduler-")).isPositive();
        } finally {
            // When
            broker.close();
        }

        // Then
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
            assertThat(newThreads(before, HANDLER_THREAD_PREFIX)).isZero();
            assertThat(newThreads(before, "cairn-produce-acks-")).isZero();
            assertThat(newThreads(before, "cairn-network-thread")).isZero();
            assertThat(newThreads(before, "cairn-acceptor")).isZero();
            assertThat(newThreads(before, "kafka-scheduler-")).isZero();
        });
    }

    @Test
    void numIoThreadsChangesLiveWithinKafkasBoundsAndAfterARestart() throws Exception {
        // Given
        Set<Thread> before = Set.copyOf(Thread.getAllStackTraces().keySet());
        InProcessBroker broker = InProcessBroker.start(dataDir, Map.of("num.io.threads", "3"));
        ConfigResource one = new ConfigResource(ConfigResource.Type.BROKER, "1");
        try (Admin admin = admin(broker)) {
            // When: doubled, as kafka-configs --alter --entity-type brokers --entity-name 1 does it
            setIoThreads(admin, one, "6");

            // Then
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThat(newThreads(before, HANDLER_THREAD_PREFIX)).isEqualTo(6));

            // When: more than double, then down to 2 (not below half: 3)
            ExecutionException refused = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                    () -> setIoThreads(admin, one, "13"));
            setIoThreads(admin, one, "3");

            // Then: Kafka's refusal, and the surplus threads end once idle
            // (DynamicBrokerConfig wraps it: ConfigException(name, value) with name "Invalid dynamic configuration")
            assertThat(refused.getCause()).isInstanceOf(InvalidRequestException.class).hasMessage("Invalid value "
                    + "org.apache.kafka.common.config.ConfigException: Dynamic thread count update validation failed "
                    + "for num.io.threads=13, value should not be greater than double the current value 6 for "
                    + "configuration Invalid dynamic configuration");
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThat(newThreads(before, HANDLER_THREAD_PREFIX)).isEqualTo(3));
            setIoThreads(admin, new ConfigResource(ConfigResource.Type.BROKER, ""), "5");
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThat(newThreads(before, HANDLER_THREAD_PREFIX)).isEqualTo(3));
            admin.incrementalAlterConfigs(Map.of(one, List.of(new AlterConfigOp(new ConfigEntry("num.io.threads",
                    ""), AlterConfigOp.OpType.DELETE)))).all().get(30, TimeUnit.SECONDS);
            // Then: without its own value the broker takes the cluster default's
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThat(newThreads(before, HANDLER_THREAD_PREFIX)).isEqualTo(5));
        } finally {
            broker.close();
        }

        // When: the broker restarts from its server.properties' 3
        await().atMost(Duration.ofSeconds(5)).until(() -> newThreads(before, HANDLER_THREAD_PREFIX) == 0);
        broker = InProcessBroker.start(dataDir, Map.of("num.io.threads", "3"));
        try {
            // Then: the cluster default kept in metadata sizes the pool again
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThat(newThreads(before, HANDLER_THREAD_PREFIX)).isEqualTo(5));
        } finally {
            broker.close();
        }
    }

    @Test
    void aListenersOwnNetworkThreadsServeItsConnectionsAndResizeLive() throws Exception {
        // Given: PLAINTEXT with 2 network threads of its own (num.network.threads: Kafka's 3)
        Set<Thread> before = Set.copyOf(Thread.getAllStackTraces().keySet());
        String threads = "cairn-network-thread-PLAINTEXT";
        String key = "listener.name.plaintext.num.network.threads";
        InProcessBroker broker = InProcessBroker.start(dataDir, Map.of(key, "2"));
        ConfigResource one = new ConfigResource(ConfigResource.Type.BROKER, "1");
        try (Admin admin = admin(broker)) {
            connectTimes(broker, 4);
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThat(newThreads(before, threads)).isEqualTo(2));

            // When: 4, as kafka-configs --alter --entity-type brokers --entity-name 1 sets it
            admin.incrementalAlterConfigs(Map.of(one, List.of(new AlterConfigOp(new ConfigEntry(key, "4"),
                    AlterConfigOp.OpType.SET)))).all().get(30, TimeUnit.SECONDS);

            // Then: new connections are spread over 4
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                connectTimes(broker, 4);
                assertThat(newThreads(before, threads)).isEqualTo(4);
            });

            // When: deleted, the listener's own value in server.properties is back (the last two threads end)
            admin.incrementalAlterConfigs(Map.of(one, List.of(new AlterConfigOp(new ConfigEntry(key, ""),
                    AlterConfigOp.OpType.DELETE)))).all().get(30, TimeUnit.SECONDS);

            // Then
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThat(newThreads(before, threads)).isEqualTo(2));
        } finally {
            broker.close();
        }
    }

    /** Opens and closes {@code count} connections to the broker's listener (each registers with a network thread). */
    private static void connectTimes(InProcessBroker broker, int count) throws Exception {
        for (int i = 0; i < count; i++) {
            try (RawConnection connection = broker.connect()) {
                connection.sendFrame(frame(ApiKeys.METADATA, (short) 12, i, new MetadataRequestData()));
                connection.readFrame();
            }
        }
    }

    private static void setIoThreads(Admin admin, ConfigResource resource, String value) throws Exception {
        admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(new ConfigEntry("num.io.threads",
                value), AlterConfigOp.OpType.SET)))).all().get(30, TimeUnit.SECONDS);
    }

    private static Admin admin(InProcessBroker broker) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + broker.port());
        return Admin.create(props);
    }

    /** The live threads named {@code namePrefix}... that are not in {@code before}. */
    private static long newThreads(Set<Thread> before, String namePrefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && !before.contains(t) && t.getName().startsWith(namePrefix)).count();
    }

    /** Creates a one-partition topic and waits until this broker leads its partition. */
    private static Partition createTopic(InProcessBroker broker, String name) throws Exception {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + broker.port());
        try (Admin admin = Admin.create(props)) {
            admin.createTopics(List.of(new NewTopic(name, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        TopicPartition tp = new TopicPartition(name, 0);
        await().atMost(Duration.ofSeconds(30)).until(() -> broker.replicaManager().partition(tp)
                .map(Partition::isLeader).orElse(false));
        return broker.replicaManager().partition(tp).orElseThrow();
    }

    private static ProduceRequestData produce(String topic) {
        MemoryRecords records = MemoryRecords.withRecords(Compression.NONE,
                new SimpleRecord(System.currentTimeMillis(), "k".getBytes(StandardCharsets.UTF_8),
                        "v".getBytes(StandardCharsets.UTF_8)));
        ProduceRequestData data = new ProduceRequestData().setAcks((short) 1).setTimeoutMs(30_000);
        ProduceRequestData.TopicProduceData topicData = new ProduceRequestData.TopicProduceData().setName(topic);
        topicData.partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(records));
        data.topicData().add(topicData);
        return data;
    }

    /** A read_committed fetch: the last stable offset it needs is read under the partition's lock. */
    private static FetchRequestData readCommittedFetch(String topic) {
        FetchRequestData.FetchPartition partition = new FetchRequestData.FetchPartition().setPartition(0)
                .setFetchOffset(0).setPartitionMaxBytes(1 << 20).setCurrentLeaderEpoch(-1).setLogStartOffset(-1);
        return new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0).setMinBytes(0).setMaxBytes(1 << 20)
                .setIsolationLevel((byte) 1).setSessionId(0).setSessionEpoch(-1)
                .setTopics(List.of(new FetchRequestData.FetchTopic().setTopic(topic)
                        .setPartitions(List.of(partition))));
    }

    private static ByteBuffer frame(ApiKeys key, short version, int correlationId, ApiMessage data) {
        RequestHeader header = new RequestHeader(key, version, KafkaWire.CLIENT_ID, correlationId);
        ByteBuffer headerBytes = MessageUtil.toByteBufferAccessor(header.data(), header.headerVersion()).buffer();
        ByteBuffer body = MessageUtil.toByteBufferAccessor(data, version).buffer();
        ByteBuffer frame = ByteBuffer.allocate(headerBytes.remaining() + body.remaining());
        frame.put(headerBytes).put(body).flip();
        return frame;
    }

    /** The body of a response, after checking its header's correlation id. */
    private static ByteBufferAccessor body(ByteBuffer payload, ApiKeys key, short version, int correlationId) {
        ResponseHeader header = ResponseHeader.parse(payload, key.responseHeaderVersion(version));
        assertThat(header.correlationId()).isEqualTo(correlationId);
        return new ByteBufferAccessor(payload);
    }
}
