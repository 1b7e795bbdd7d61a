package io.cairn.compat.data;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.compat.harness.KafkaHalfInFaults;
import io.cairn.compat.harness.SlowKinds;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The Java producer with its default settings (idempotent, acks=all) sends 100,000 records with keys, values,
 * headers and explicit timestamps to a 3-partition topic, once per compression type; a consumer (assign, seek to
 * the beginning) reads back exactly those records, in order per partition, at contiguous offsets, none twice and
 * none missing. The topic's 1 MiB segments make the log roll and reads cross segment ends.
 */
@Timeout(300)
@ExtendWith(BrokerLogsExtension.class)
class ProduceConsumeIT {

    private static final int RECORDS = 100_000;
    private static final int PARTITIONS = 3;
    /** Small segments, so the log rolls and the consumer's fetches cross segment ends. */
    private static final int SEGMENT_BYTES = 1024 * 1024;
    private static final List<String> COMPRESSION_TYPES = List.of("none", "gzip", "snappy", "lz4", "zstd");

    static Stream<Arguments> kindsAndCompressionTypes() {
        return SlowKinds.kinds().flatMap(kind -> COMPRESSION_TYPES.stream().map(type -> Arguments.of(kind, type)));
    }

    @Tag(KafkaHalfInFaults.TAG)
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("kindsAndCompressionTypes")
    void consumerShouldReadBackExactlyWhatTheDefaultProducerSent(BrokerKind kind, String compressionType)
            throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = DataClients.uniqueTopic("produce-" + compressionType);
        DataClients.createTopic(broker, topic, PARTITIONS,
                Map.of("segment.bytes", Integer.toString(SEGMENT_BYTES)));
        long baseTimestamp = System.currentTimeMillis() - Duration.ofMinutes(10).toMillis();

        // When
        AtomicInteger acknowledged = new AtomicInteger();
        AtomicReference<Exception> firstError = new AtomicReference<>();
        try (KafkaProducer<byte[], byte[]> producer = DataClients.producer(broker,
                Map.of(ProducerConfig.COMPRESSION_TYPE_CONFIG, compressionType))) {
            for (int i = 0; i < RECORDS; i++) {
                producer.send(record(topic, i, baseTimestamp), (metadata, error) -> {
                    if (error != null) {
                        firstError.compareAndSet(null, error);
                    } else {
                        acknowledged.incrementAndGet();
                    }
                });
            }
            producer.flush();
        }
        Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> read = DataClients.readAll(broker,
                DataClients.partitions(topic, PARTITIONS), Duration.ofSeconds(120));

        // Then
        assertThat(firstError.get()).as("first failed send").isNull();
        assertThat(acknowledged.get()).isEqualTo(RECORDS);
        for (int p = 0; p < PARTITIONS; p++) {
            List<ConsumerRecord<byte[], byte[]>> records = read.get(new TopicPartition(topic, p));
            assertThat(records).as("records of partition %d", p).hasSize(expectedCount(p));
            for (int j = 0; j < records.size(); j++) {
                assertSame(records.get(j), j, record(topic, p + j * PARTITIONS, baseTimestamp));
            }
        }
        assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
    }

    private static int expectedCount(int partition) {
        return (RECORDS - partition + PARTITIONS - 1) / PARTITIONS;
    }

    /** Record {@code i}: partition {@code i % 3}, a key, a value of 40 to 140 bytes, two headers, a timestamp. */
    private static ProducerRecord<byte[], byte[]> record(String topic, int i, long baseTimestamp) {
        byte[] key = ("key-" + i).getBytes(StandardCharsets.UTF_8);
        StringBuilder value = new StringBuilder("value-").append(i).append('-');
        for (int n = 0; n < i % 100; n++) {
            value.append((char) ('a' + (i + n) % 26));
        }
        List<Header> headers = List.of(
                new RecordHeader("index", ByteBuffer.allocate(4).putInt(0, i).array()),
                new RecordHeader("trace", ("t" + Integer.toHexString(i * 31)).getBytes(StandardCharsets.UTF_8)));
        return new ProducerRecord<>(topic, i % PARTITIONS, baseTimestamp + i, key,
                value.toString().getBytes(StandardCharsets.UTF_8), headers);
    }

    private static void assertSame(ConsumerRecord<byte[], byte[]> actual, long offset,
            ProducerRecord<byte[], byte[]> expected) {
        if (actual.offset() != offset || actual.timestamp() != expected.timestamp()
                || actual.timestampType() != TimestampType.CREATE_TIME
                || !Arrays.equals(actual.key(), expected.key()) || !Arrays.equals(actual.value(), expected.value())
                || !sameHeaders(actual, expected)) {
            throw new AssertionError("At offset " + offset + " of partition " + actual.partition() + " expected "
                    + describe(offset, expected.timestamp(), TimestampType.CREATE_TIME, expected.key(),
                            expected.value(), expected.headers()) + " but read "
                    + describe(actual.offset(), actual.timestamp(), actual.timestampType(), actual.key(),
                            actual.value(), actual.headers()));
        }
    }

    private static boolean sameHeaders(ConsumerRecord<byte[], byte[]> actual, ProducerRecord<byte[], byte[]> expected) {
        Header[] a = actual.headers().toArray();
        Header[] e = expected.headers().toArray();
        if (a.length != e.length) {
            return false;
        }
        for (int i = 0; i < a.length; i++) {
            if (!a[i].key().equals(e[i].key()) || !Arrays.equals(a[i].value(), e[i].value())) {
                return false;
            }
        }
        return true;
    }

    private static String describe(long offset, long timestamp, TimestampType type, byte[] key, byte[] value,
            Iterable<Header> headers) {
        List<String> shown = new ArrayList<>();
        headers.forEach(h -> shown.add(h.key() + "=" + Arrays.toString(h.value())));
        return "{offset " + offset + ", " + type + " " + timestamp + ", key "
                + (key == null ? "null" : new String(key, StandardCharsets.UTF_8)) + ", value "
                + (value == null ? "null" : new String(value, StandardCharsets.UTF_8)) + ", headers " + shown + "}";
    }
}
