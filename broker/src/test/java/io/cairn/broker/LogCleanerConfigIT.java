package io.cairn.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The log cleaner's settings on a real broker: {@code log.cleaner.backoff.ms} from {@code server.properties} is how
 * soon a compacted topic is cleaned, and {@code log.cleaner.threads} changes live within Kafka's bounds (refused with
 * Kafka's message beyond them), holds across a restart, and the restarted threads still compact; the cleaner's
 * buffers ({@code log.cleaner.dedupe.buffer.size}, {@code .io.buffer.load.factor}, {@code .io.buffer.size}) change
 * live too, a dedupe buffer of 1 MiB or less per thread refused with Kafka's message.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LogCleanerConfigIT {

    private static final String THREAD_PREFIX = "kafka-log-cleaner-thread-";

    @TempDir
    Path dataDir;

    @Test
    void theCleanerThreadsChangeLiveWithinKafkasBoundsAndKeepCompacting() throws Exception {
        Map<String, String> props = Map.of("log.cleaner.backoff.ms", "100");
        try (InProcessBroker broker = InProcessBroker.start(dataDir, props); Admin admin = admin(broker)) {
            // Given: one cleaner thread (Kafka's default) compacting a topic
            admin.createTopics(List.of(new NewTopic("compacted", 1, (short) 1).configs(Map.of(
                    "cleanup.policy", "compact", "segment.ms", "100", "min.cleanable.dirty.ratio", "0.01"))))
                    .all().get(30, TimeUnit.SECONDS);
            produceOverwrites(broker, "compacted", "a");
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(readAll(broker, "compacted")).hasSizeLessThan(5));

            // When: kafka-configs --alter --entity-type brokers --entity-name 1 --add-config log.cleaner.threads=2
            setThreads(admin, "2");
            ExecutionException refused = assertThrows(ExecutionException.class, () -> setThreads(admin, "5"));

            // Then: two threads, Kafka's refusal of more than double, and compaction goes on
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(cleanerThreads()).isEqualTo(2));
            assertThat(refused.getCause()).isInstanceOf(InvalidRequestException.class).hasMessage("Invalid value "
                    + "org.apache.kafka.common.config.ConfigException: Log cleaner threads cannot be increased to "
                    + "more than double the current value 2 for configuration Invalid dynamic configuration");
            // and the cleaner's memory changes live too (Kafka's minimum: more than 1 MiB per thread), the threads
            // restarting with a smaller map that still compacts
            alterBroker(admin, "log.cleaner.dedupe.buffer.size", "4194304");
            alterBroker(admin, "log.cleaner.io.buffer.load.factor", "0.5");
            alterBroker(admin, "log.cleaner.io.buffer.size", "65536");
            ExecutionException tooSmall = assertThrows(ExecutionException.class, () ->
                    alterBroker(admin, "log.cleaner.dedupe.buffer.size", "2097152"));
            assertThat(tooSmall.getCause()).isInstanceOf(InvalidRequestException.class).hasMessage(
                    "requirement failed: log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner thread.");
            produceOverwrites(broker, "compacted", "b");
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(readAll(broker, "compacted")).hasSizeLessThan(5).last().isEqualTo("b99"));
        }
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(cleanerThreads()).isZero());

        // When: the broker restarts from the same server.properties
        try (InProcessBroker broker = InProcessBroker.start(dataDir, props)) {
            // Then: the dynamic 2 holds
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(cleanerThreads()).isEqualTo(2));
        }
    }

    private static long cleanerThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith(THREAD_PREFIX)).count();
    }

    private static void setThreads(Admin admin, String value) throws Exception {
        alterBroker(admin, "log.cleaner.threads", value);
    }

    private static void alterBroker(Admin admin, String key, String value) throws Exception {
        admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.BROKER, "1"), List.of(
                new AlterConfigOp(new ConfigEntry(key, value), AlterConfigOp.OpType.SET))))
                .all().get(30, TimeUnit.SECONDS);
    }

    /** 100 values of one key, then one more after the segment's 100 ms so the first segment rolls. */
    private static void produceOverwrites(InProcessBroker broker, String topic, String prefix) throws Exception {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + broker.port());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props, new StringSerializer(),
                new StringSerializer())) {
            for (int i = 0; i < 99; i++) {
                producer.send(new ProducerRecord<>(topic, "k", prefix + i)).get(30, TimeUnit.SECONDS);
            }
            Thread.sleep(200);
            producer.send(new ProducerRecord<>(topic, "k", prefix + 99)).get(30, TimeUnit.SECONDS);
        }
    }

    private static List<String> readAll(InProcessBroker broker, String topic) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + broker.port());
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new StringDeserializer())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            java.util.ArrayList<String> values = new java.util.ArrayList<>();
            while (consumer.position(tp) < end) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    values.add(r.value());
                }
            }
            return values;
        }
    }

    private static Admin admin(InProcessBroker broker) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + broker.port());
        return Admin.create(props);
    }
}
