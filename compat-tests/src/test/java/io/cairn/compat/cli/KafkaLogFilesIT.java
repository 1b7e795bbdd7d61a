package io.cairn.compat.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.CairnProcess;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cairn logs as Kafka does with {@code bin/cairn-server}'s {@code config/log4j2.xml} (Kafka 4.1's
 * {@code config/log4j2.yaml} layout): {@code server.log} has the server's lines but not the controller's, which are in
 * {@code controller.log}; a partition's leadership is in {@code state-change.log}; compaction in
 * {@code log-cleaner.log}; with {@code kafka.request.logger} at DEBUG, every completed request with its times in
 * {@code kafka-request.log}. All under {@code kafka.logs.dir}, as bin/cairn-run-class passes it from {@code LOG_DIR}.
 */
@Timeout(180)
@ExtendWith(BrokerLogsExtension.class)
class KafkaLogFilesIT {

    /** The temp files and directories of this class's tests, removed after them. */
    @TempDir
    static Path tmp;

    /** The repository's config directory (set by the build). */
    private static final Path CONFIG_DIR = Paths.get(System.getProperty("cairn.config.dir", "../config"));
    private static final Duration CLEANED_TIMEOUT = Duration.ofSeconds(90);

    @Test
    void writesKafkasLogFiles() throws Exception {
        // Given: the script's log4j2 configuration with Kafka's request logger at DEBUG
        Path work = Files.createTempDirectory(tmp, "kafka-log-files");
        Path logs = work.resolve("logs");
        String shipped = Files.readString(CONFIG_DIR.resolve("log4j2.xml"), StandardCharsets.UTF_8);
        String debugRequests = shipped.replace("name=\"kafka.request.logger\" level=\"WARN\"",
                "name=\"kafka.request.logger\" level=\"DEBUG\"");
        assertThat(debugRequests).as("config/log4j2.xml names kafka.request.logger at WARN").isNotEqualTo(shipped);
        Path config = Files.writeString(work.resolve("log4j2.xml"), debugRequests, StandardCharsets.UTF_8);
        try (CairnProcess cairn = CairnProcess.builder()
                .jvmArgs("-Xmx512m", "-Dio.netty.leakDetection.level=paranoid",
                        "-Dlog4j2.configurationFile=" + config, "-Dkafka.logs.dir=" + logs)
                .config("log.cleaner.backoff.ms", "200")
                .build()) {
            cairn.start();

            // When: a compacted topic with short segments gets the same keys again and again
            String topic = "log-files-compacted";
            try (Admin admin = Admin.create(Map.<String, Object>of("bootstrap.servers",
                    cairn.bootstrapServers()))) {
                admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(Map.of(
                        "cleanup.policy", "compact", "segment.ms", "100", "min.cleanable.dirty.ratio", "0.01"))))
                        .all().get(30, TimeUnit.SECONDS);
            }
            try (KafkaProducer<String, String> producer = producer(cairn)) {
                await().atMost(CLEANED_TIMEOUT).pollInterval(Duration.ofMillis(200)).until(() -> {
                    for (int i = 0; i < 20; i++) {
                        producer.send(new ProducerRecord<>(topic, "key-" + (i % 5), "value-" + i));
                    }
                    producer.flush();
                    return read(logs.resolve("log-cleaner.log")).contains("Cleaned offsets");
                });
            }

            // Then
            String server = read(logs.resolve("server.log"));
            assertThat(server).contains("Cairn broker started").contains("Awaiting socket connections")
                    .doesNotContain("(io.cairn.metadata.controller.");
            assertThat(read(logs.resolve("controller.log"))).contains("becomes the active controller");
            assertThat(read(logs.resolve("state-change.log")))
                    .contains("[Partition " + topic + "-0 broker=1] Leader in leader epoch 0");
            assertThat(read(logs.resolve("log-cleaner.log"))).contains("[Cleaner partition=" + topic + "-0]");
            assertThat(read(logs.resolve("kafka-request.log")))
                    .contains("Completed request:{api=CreateTopics,version=")
                    .contains("Completed request:{api=Produce,version=").contains(";totalTime:");
        }
    }

    private static KafkaProducer<String, String> producer(CairnProcess cairn) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cairn.bootstrapServers());
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return new KafkaProducer<>(props);
    }

    /**
     * The file's text with that of its hourly rollovers ({@code <name>.yyyy-MM-dd-HH}, Kafka's pattern) before it,
     * oldest first: a run that crosses the hour finds its first lines in the rolled file.
     */
    private static String read(Path file) throws IOException {
        StringBuilder text = new StringBuilder();
        Path dir = file.getParent();
        if (Files.isDirectory(dir)) {
            String rolled = file.getFileName() + ".";
            try (Stream<Path> files = Files.list(dir)) {
                for (Path old : files.filter(f -> f.getFileName().toString().startsWith(rolled)).sorted().toList()) {
                    text.append(Files.readString(old, StandardCharsets.UTF_8));
                }
            }
        }
        if (Files.exists(file)) {
            text.append(Files.readString(file, StandardCharsets.UTF_8));
        }
        return text.toString();
    }
}
