package io.cairn.compat.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.RawKafkaClient;
import io.cairn.wire.message.FetchRequestData;
import io.cairn.wire.message.FetchResponseData;
import io.cairn.wire.message.ProduceRequestData;
import io.cairn.wire.message.ProduceResponseData;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The clients the data-path scenarios share: an Admin that creates topics, byte-array producers and consumers with
 * a scenario's overrides, a consumer loop that reads partitions to their end, and raw Produce and Fetch requests
 * whose record batches kafka-clients' {@link MemoryRecords} builds and parses (so the test side never relies on
 * Cairn's own record code).
 *
 * <p>Stateless; every method may be called from any thread.
 */
final class DataClients {

    static final long TIMEOUT_S = 30;
    static final Duration TIMEOUT = Duration.ofSeconds(TIMEOUT_S);
    /** Produce v11: topic names (v13 switches to topic ids), KIP-467 record errors. */
    static final short PRODUCE_VERSION = 11;
    /** Fetch v13: the first version that names topics by id. */
    static final short FETCH_VERSION = 13;

    /**
     * System property restricting the broker kinds the data-path scenarios run against, e.g. {@code KAFKA} while
     * developing a scenario; every kind by default.
     */
    static final String KINDS_PROPERTY = "cairn.compat.kinds";

    private DataClients() {
    }

    /** The broker kinds to run against: every {@link BrokerKind}, or those named by {@value #KINDS_PROPERTY}. */
    static Stream<BrokerKind> kinds() {
        String names = System.getProperty(KINDS_PROPERTY, "");
        if (names.isBlank()) {
            return Arrays.stream(BrokerKind.values());
        }
        return Arrays.stream(names.split(",")).map(String::trim).map(BrokerKind::valueOf);
    }

    /** A topic name no other scenario uses. */
    static String uniqueTopic(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    static Admin admin(BrokerProcess broker) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 30_000);
        return Admin.create(props);
    }

    /**
     * Creates {@code topic} with {@code partitions} partitions, replication factor 1, and returns its id once every
     * partition answers a fetch without error (a broker may serve a new partition a moment after CreateTopics
     * returns).
     */
    static Uuid createTopic(BrokerProcess broker, String topic, int partitions, Map<String, String> configs)
            throws Exception {
        Uuid id;
        try (Admin admin = admin(broker)) {
            CreateTopicsResult result = admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1)
                    .configs(configs)));
            result.all().get(TIMEOUT_S, TimeUnit.SECONDS);
            id = result.topicId(topic).get(TIMEOUT_S, TimeUnit.SECONDS);
        }
        for (int p = 0; p < partitions; p++) {
            int partition = p;
            await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(50)).untilAsserted(() -> {
                try (RawKafkaClient client = RawKafkaClient.connect(broker)) {
                    FetchResponseData.PartitionData fetched = onlyPartition(
                            (FetchResponseData) call(client, fetchRequest(id, partition, 0, 0), FETCH_VERSION));
                    records(fetched);
                    assertThat(fetched.errorCode()).as("fetch error of new partition %d", partition).isZero();
                }
            });
        }
        return id;
    }

    /** A byte-array producer with Kafka's defaults (idempotent, acks=all) except {@code overrides}. */
    static KafkaProducer<byte[], byte[]> producer(BrokerProcess broker, Map<String, Object> overrides) {
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        props.putAll(overrides);
        return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    }

    /** A byte-array consumer without a group (assign and seek only) with {@code overrides}. */
    static KafkaConsumer<byte[], byte[]> consumer(BrokerProcess broker, Map<String, Object> overrides) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10_000);
        props.putAll(overrides);
        return new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    /** The topic's partitions {@code 0..partitions-1}. */
    static List<TopicPartition> partitions(String topic, int partitions) {
        List<TopicPartition> result = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            result.add(new TopicPartition(topic, p));
        }
        return result;
    }

    /**
     * Every record of {@code partitions} from the beginning to the end offsets the broker reports now, per partition
     * in the order the consumer returned them; fails if the end is not reached within {@code timeout}.
     */
    static Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> readAll(BrokerProcess broker,
            Collection<TopicPartition> partitions, Duration timeout) {
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(broker, Map.of())) {
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, TIMEOUT);
            Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> records = new HashMap<>();
            partitions.forEach(tp -> records.put(tp, new ArrayList<>()));
            long deadline = System.nanoTime() + timeout.toNanos();
            while (!reachedEnd(consumer, ends)) {
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("Did not reach the end offsets " + ends + " within " + timeout
                            + "; read " + counts(records));
                }
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(500))) {
                    records.get(new TopicPartition(record.topic(), record.partition())).add(record);
                }
            }
            return records;
        }
    }

    private static boolean reachedEnd(KafkaConsumer<byte[], byte[]> consumer, Map<TopicPartition, Long> ends) {
        for (Map.Entry<TopicPartition, Long> end : ends.entrySet()) {
            if (consumer.position(end.getKey(), TIMEOUT) < end.getValue()) {
                return false;
            }
        }
        return true;
    }

    private static Map<TopicPartition, Integer> counts(Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> r) {
        Map<TopicPartition, Integer> counts = new HashMap<>();
        r.forEach((tp, list) -> counts.put(tp, list.size()));
        return counts;
    }

    /** One uncompressed magic-v2 batch of {@code records}, base offset 0, as the producer would send it. */
    static byte[] batch(SimpleRecord... records) {
        ByteBuffer buffer = MemoryRecords.withRecords(RecordBatch.MAGIC_VALUE_V2, 0L, Compression.NONE, records)
                .buffer();
        byte[] bytes = new byte[buffer.remaining()];
        buffer.get(bytes);
        return bytes;
    }

    /** A Produce request of {@code batch} to one partition; the broker keeps its own copy of the bytes. */
    static ProduceRequestData produceRequest(String topic, int partition, short acks, byte[] batch) {
        List<ProduceRequestData.TopicProduceData> topics = List.of(new ProduceRequestData.TopicProduceData()
                .setName(topic)
                .setPartitionData(List.of(new ProduceRequestData.PartitionProduceData()
                        .setIndex(partition)
                        .setRecords(Unpooled.wrappedBuffer(batch)))));
        return new ProduceRequestData().setAcks(acks).setTimeoutMs(30_000).setTopicData(topics);
    }

    /** The one partition response of a single-partition produce response. */
    static ProduceResponseData.PartitionProduceResponse onlyPartition(ProduceResponseData response) {
        return response.responses().get(0).partitionResponses().get(0);
    }

    /** A sessionless Fetch (epoch -1) of one partition by topic id. */
    static FetchRequestData fetchRequest(Uuid topicId, int partition, long offset, int maxWaitMs) {
        return new FetchRequestData()
                .setReplicaId(-1)
                .setMaxWaitMs(maxWaitMs)
                .setMinBytes(1)
                .setMaxBytes(1024 * 1024)
                .setIsolationLevel((byte) 0)
                .setSessionId(0)
                .setSessionEpoch(-1)
                .setTopics(List.of(new FetchRequestData.FetchTopic()
                        .setTopicId(new io.cairn.wire.protocol.Uuid(topicId.getMostSignificantBits(),
                                topicId.getLeastSignificantBits()))
                        .setPartitions(List.of(new FetchRequestData.FetchPartition()
                                .setPartition(partition)
                                .setFetchOffset(offset)
                                .setCurrentLeaderEpoch(-1)
                                .setLastFetchedEpoch(-1)
                                .setLogStartOffset(-1)
                                .setPartitionMaxBytes(1024 * 1024)))));
    }

    /** The one partition of a single-partition fetch response. */
    static FetchResponseData.PartitionData onlyPartition(FetchResponseData response) {
        return response.responses().get(0).partitions().get(0);
    }

    /**
     * A copy of the record batches of a fetched partition, parsed by kafka-clients; the response's {@code records}
     * slice is released.
     */
    static MemoryRecords records(FetchResponseData.PartitionData partition) {
        ByteBuf records = partition.records();
        if (records == null) {
            return MemoryRecords.EMPTY;
        }
        try {
            byte[] bytes = new byte[records.readableBytes()];
            records.getBytes(records.readerIndex(), bytes);
            return MemoryRecords.readableRecords(ByteBuffer.wrap(bytes));
        } finally {
            records.release();
        }
    }

    /** Sends {@code request} on {@code client} and returns its response body. */
    static <T extends io.cairn.wire.protocol.ApiMessage> T call(RawKafkaClient client,
            io.cairn.wire.protocol.ApiMessage request, short version) {
        return client.sendAndReceive(request, version, TIMEOUT);
    }
}
