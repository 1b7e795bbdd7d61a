package io.cairn.compat.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.KafkaDistribution;
import io.cairn.testkit.TestDirectories;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Kafka's stock console tools, each run as a user runs it ({@code --bootstrap-server}; the console tools in their own
 * JVM, {@code kafka-topics} and {@code kafka-get-offsets} in the test JVM as {@link KafkaDistribution#tool} runs
 * them), with the same scenario against Cairn and the reference Kafka: {@code kafka-console-producer}
 * ({@code org.apache.kafka.tools.ConsoleProducer}) fed keys, headers and values on stdin,
 * {@code kafka-console-consumer} ({@code org.apache.kafka.tools.consumer.ConsoleConsumer}) reading them back from
 * {@code --partition 0 --offset earliest}, and {@code kafka-get-offsets}
 * ({@code org.apache.kafka.tools.GetOffsetShell}) printing {@code topic:partition:offset} for latest, earliest,
 * max-timestamp and a timestamp (a partition with no such offset is left out). {@code kafka-topics} (covered by
 * {@link KafkaTopicsCommandIT}) only creates the topics here.
 */
@Timeout(120)
@ExtendWith(BrokerLogsExtension.class)
class ConsoleToolsIT {

    private static final String TOPICS = "org.apache.kafka.tools.TopicCommand";
    private static final String PRODUCER = "org.apache.kafka.tools.ConsoleProducer";
    private static final String CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer";
    private static final String GET_OFFSETS = "org.apache.kafka.tools.GetOffsetShell";
    private static final Duration TOOL_TIMEOUT = Duration.ofSeconds(60);

    @ParameterizedTest
    @EnumSource(BrokerKind.class)
    void consoleConsumerPrintsExactlyTheKeysHeadersAndValuesTheConsoleProducerRead(BrokerKind kind) {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = createTopic(broker, "console", 1);
        String input = """
                h1:v1,h2:v2\tk0\tvalue 0
                h3:\tk1\tvalue:1 with spaces
                h4:x,h4:y\t~\tno key
                h5:~\tk3\t~
                """;

        // When
        JavaTool.Result produced = runWithStdin(PRODUCER, input, "--bootstrap-server", broker.bootstrapServers(),
                "--topic", topic, "--property", "parse.key=true", "--property", "parse.headers=true",
                "--property", "null.marker=~");
        JavaTool.Result consumed = tool(CONSUMER, "--bootstrap-server", broker.bootstrapServers(), "--topic", topic,
                "--partition", "0", "--offset", "earliest", "--max-messages", "4", "--timeout-ms", "30000",
                "--property", "print.key=true", "--property", "print.headers=true",
                "--property", "print.offset=true");

        // Then
        assertThat(produced.exitCode()).as("%s", produced).isZero();
        assertThat(produced.stdout()).as("%s", produced).isEmpty();
        assertThat(consumed.exitCode()).as("%s", consumed).isZero();
        assertThat(consumed.stdout().lines().toList()).as("%s", consumed).containsExactly(
                "Offset:0\th1:v1,h2:v2\tk0\tvalue 0",
                "Offset:1\th3:\tk1\tvalue:1 with spaces",
                "Offset:2\th4:x,h4:y\tnull\tno key",
                "Offset:3\th5:null\tk3\tnull");
        assertThat(consumed.stderr()).as("%s", consumed).contains("Processed a total of 4 messages");
        noLeaks(broker);
    }

    @ParameterizedTest
    @EnumSource(BrokerKind.class)
    void getOffsetsPrintsLatestEarliestMaxTimestampAndByTimestampOffsetsPerPartition(BrokerKind kind) {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = createTopic(broker, "offsets", 3);
        long base = Instant.now().minusSeconds(60).toEpochMilli();
        produce(broker, List.of(
                new ProducerRecord<>(topic, 0, base + 1000, "a", "0"),
                new ProducerRecord<>(topic, 0, base + 3000, "b", "1"),
                new ProducerRecord<>(topic, 0, base + 2000, "c", "2"),
                new ProducerRecord<>(topic, 2, base + 500, "d", "3")));

        // When
        JavaTool.Result latest = getOffsets(broker, topic, "-1");
        JavaTool.Result earliest = getOffsets(broker, topic, "-2");
        JavaTool.Result maxTimestamp = getOffsets(broker, topic, "-3");
        JavaTool.Result byTimestamp = getOffsets(broker, topic, Long.toString(base + 1500));

        // Then
        assertThat(latest.stdout().lines().toList()).as("%s", latest)
                .containsExactly(topic + ":0:3", topic + ":1:0", topic + ":2:1");
        assertThat(earliest.stdout().lines().toList()).as("%s", earliest)
                .containsExactly(topic + ":0:0", topic + ":1:0", topic + ":2:0");
        assertThat(maxTimestamp.stdout().lines().toList()).as("%s", maxTimestamp)
                .containsExactly(topic + ":0:1", topic + ":2:0");
        assertThat(byTimestamp.stdout().lines().toList()).as("%s", byTimestamp)
                .containsExactly(topic + ":0:1");
        for (JavaTool.Result result : List.of(latest, earliest, maxTimestamp, byTimestamp)) {
            assertThat(result.exitCode()).as("%s", result).isZero();
        }
        noLeaks(broker);
    }

    private static String createTopic(BrokerProcess broker, String prefix, int partitions) {
        String topic = prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
        JavaTool.Result created = tool(TOPICS, "--bootstrap-server", broker.bootstrapServers(), "--create",
                "--topic", topic, "--partitions", Integer.toString(partitions), "--replication-factor", "1");
        assertThat(created.exitCode()).as("%s", created).isZero();
        return topic;
    }

    private static JavaTool.Result getOffsets(BrokerProcess broker, String topic, String time) {
        return tool(GET_OFFSETS, "--bootstrap-server", broker.bootstrapServers(), "--topic", topic, "--time", time);
    }

    /** Sends with a default (idempotent, acks=all) producer and waits for every acknowledgement. */
    private static void produce(BrokerProcess broker, List<ProducerRecord<String, String>> records) {
        Properties config = new Properties();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "30000");
        config.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "20000");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(config, new StringSerializer(),
                new StringSerializer())) {
            for (ProducerRecord<String, String> record : records) {
                producer.send(record).get(30, TimeUnit.SECONDS);
            }
        } catch (Exception e) {
            throw new AssertionError("Could not produce to " + broker.bootstrapServers() + ": " + e, e);
        }
    }

    private static JavaTool.Result tool(String mainClass, String... args) {
        return KafkaDistribution.tool(mainClass).args(args).timeout(TOOL_TIMEOUT).build().run();
    }

    /**
     * Runs one of Kafka's tools in its own JVM, as {@link KafkaDistribution#tool} runs a console tool, with
     * {@code stdin} as its standard input (a user piping lines into {@code kafka-console-producer}); a tool that
     * outlives {@link #TOOL_TIMEOUT} is killed by PID.
     */
    private static JavaTool.Result runWithStdin(String mainClass, String stdin, String... args) {
        Path dir = TestDirectories.createTempDirectory("cairn-console-");
        try {
            Path log4j = Files.writeString(dir.resolve("log4j2.properties"), """
                    appender.console.type = Console
                    appender.console.name = CONSOLE
                    appender.console.target = SYSTEM_ERR
                    appender.console.layout.type = PatternLayout
                    appender.console.layout.pattern = [%d] %p %m (%c)%n
                    rootLogger.level = WARN
                    rootLogger.appenderRef.console.ref = CONSOLE
                    """, StandardCharsets.UTF_8);
            Path in = Files.writeString(dir.resolve("stdin"), stdin, StandardCharsets.UTF_8);
            Path out = dir.resolve("stdout");
            Path err = dir.resolve("stderr");
            List<String> command = new ArrayList<>(List.of(JavaTool.javaExecutable(), "-Xmx256m",
                    "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Dlog4j2.configurationFile=" + log4j,
                    "-cp", KafkaDistribution.classpath(), mainClass));
            command.addAll(List.of(args));
            Instant begin = Instant.now();
            Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectInput(in.toFile())
                    .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            if (!process.waitFor(TOOL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new AssertionError(mainClass + " (pid " + process.pid() + ") did not finish within "
                        + TOOL_TIMEOUT.toSeconds() + " s and was killed; stdout:\n" + Files.readString(out)
                        + "\nstderr:\n" + Files.readString(err));
            }
            return new JavaTool.Result(process.exitValue(), Files.readString(out), Files.readString(err),
                    Duration.between(begin, Instant.now()));
        } catch (IOException e) {
            throw new UncheckedIOException("Could not run " + mainClass, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("Interrupted while running " + mainClass, e);
        } finally {
            TestDirectories.deleteRecursively(dir);
        }
    }

    private static void noLeaks(BrokerProcess broker) {
        assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
    }
}
