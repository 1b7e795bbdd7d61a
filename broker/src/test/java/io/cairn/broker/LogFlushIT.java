package io.cairn.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.log.PartitionLog;
import io.cairn.log.recovery.LogLoader;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.testkit.LeakDetection;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The broker's flush settings as Kafka honours them: {@code log.flush.scheduler.interval.ms} runs the time-based
 * flusher, and, with {@code log.flush.interval.ms} unset, is also the default {@code flush.ms} of every topic
 * (Kafka's {@code KafkaConfig.logFlushIntervalMs}). The recovery point the flush moves is read from the partition's
 * log, and from its checkpoint file once the broker has shut down (flushes write that file at most once a minute, as
 * Kafka's {@code log.flush.offset.checkpoint.interval.ms}); DescribeConfigs shows the keys as a stock Admin sees them.
 */
@ExtendWith(LeakDetection.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LogFlushIT {

    @TempDir
    Path dataDir;

    private static String recoveryPoint(Path partitionDir) throws Exception {
        Path file = partitionDir.resolve(LogLoader.OFFSETS_CHECKPOINT);
        if (!Files.exists(file)) {
            return "";
        }
        return Files.readAllLines(file, StandardCharsets.UTF_8).stream()
                .filter(line -> line.startsWith("recovery-point ")).findFirst().orElse("");
    }

    @Test
    void theSchedulerIntervalFlushesLogsByTimeAndIsTheDefaultFlushMs() throws Exception {
        // Given a broker whose flusher checks every 100 ms, with no log.flush.interval.ms
        Path partitionDir = dataDir.resolve("flushed-0");
        try (InProcessBroker broker = InProcessBroker.start(dataDir,
                Map.of("log.flush.scheduler.interval.ms", "100"))) {
            Properties props = new Properties();
            props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + broker.port());
            try (Admin admin = Admin.create(props)) {
                admin.createTopics(List.of(new NewTopic("flushed", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);

                // When three records are produced (far below segment.bytes, so no roll flushes them)
                props.put(ProducerConfig.ACKS_CONFIG, "all");
                try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props, new ByteArraySerializer(),
                        new ByteArraySerializer())) {
                    for (int i = 0; i < 3; i++) {
                        producer.send(new ProducerRecord<>("flushed", 0, null, ("v" + i).getBytes(
                                StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
                    }
                }

                // Then the time-based flush moves the recovery point to the log end offset
                PartitionLog log = broker.replicaManager().partition(new TopicPartition("flushed", 0))
                        .orElseThrow().log();
                await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
                        assertThat(log.recoveryPoint()).isEqualTo(3L));

                // and DescribeConfigs shows the broker key and the topic default it sets
                ConfigResource brokerResource = new ConfigResource(ConfigResource.Type.BROKER, "1");
                ConfigResource topicResource = new ConfigResource(ConfigResource.Type.TOPIC, "flushed");
                Map<ConfigResource, Config> described = admin.describeConfigs(List.of(brokerResource, topicResource),
                        new DescribeConfigsOptions().includeSynonyms(true)).all().get(30, TimeUnit.SECONDS);
                ConfigEntry scheduler = described.get(brokerResource).get("log.flush.scheduler.interval.ms");
                assertThat(scheduler.value()).isEqualTo("100");
                assertThat(scheduler.source()).isEqualTo(ConfigEntry.ConfigSource.STATIC_BROKER_CONFIG);
                assertThat(described.get(brokerResource).get("log.flush.interval.messages").value())
                        .isEqualTo(Long.toString(Long.MAX_VALUE));
                ConfigEntry flushMs = described.get(topicResource).get("flush.ms");
                assertThat(flushMs.value()).isEqualTo("100");
                // Kafka's synonym list of a topic key starts at its first broker synonym (log.flush.interval.ms),
                // which is set nowhere here, so Kafka reports the value with DEFAULT_CONFIG and no synonyms
                assertThat(flushMs.source()).isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);
                assertThat(flushMs.synonyms()).isEmpty();
            }
        }
        // and the shutdown checkpoints it
        assertThat(recoveryPoint(partitionDir)).isEqualTo("recovery-point 3");
    }
}
