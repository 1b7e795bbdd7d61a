package io.cairn.compat.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.cairn.compat.group.GroupClients;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.KafkaDistribution;
import io.cairn.testkit.TestDirectories;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * librdkafka, through {@code kcat} (the Debian package), against Cairn and the reference Kafka with the same
 * scenario: {@code kcat -P} produces keyed records with headers under every compression codec, {@code kcat -C}
 * reads back exactly what was sent, Kafka's {@code DumpLogSegments} shows the batches stored with the producer's
 * codec, librdkafka's idempotent producer gets a producer id and writes sequenced batches, {@code kcat -L} lists
 * the topic with its partitions, and {@code kcat -G} (librdkafka's balanced KafkaConsumer) reads every partition as
 * the one member of a consumer group and commits its offsets there, from which a second run resumes.
 *
 * <p>kcat is looked up on {@code PATH}. When it is missing the tests are skipped, unless the environment variable
 * {@value #REQUIRE_KCAT} is set (as {@code .ci/run} does after installing it), in which case they fail.
 */
@Timeout(90)
@ExtendWith(BrokerLogsExtension.class)
class KcatIT {

    static final String REQUIRE_KCAT = "CAIRN_REQUIRE_KCAT";

    private static final int RECORDS = 500;
    private static final Duration KCAT_TIMEOUT = Duration.ofSeconds(25);

    private Path kcat;

    /** Per test rather than per class, so that a missing kcat shows as each test skipped (or failed), not as none. */
    @BeforeEach
    void findKcat() {
        Optional<Path> found = Arrays.stream(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
                .filter(dir -> !dir.isBlank())
                .map(dir -> Paths.get(dir, "kcat"))
                .filter(Files::isExecutable)
                .findFirst();
        String missing = "kcat (librdkafka's command-line client) is not on PATH; install it with "
                + "`apt-get install kcat` (Debian/Ubuntu) to run the librdkafka compatibility tests";
        if (found.isEmpty() && System.getenv(REQUIRE_KCAT) != null) {
            fail(missing + " (" + REQUIRE_KCAT + " is set, so kcat is required)");
        }
        assumeTrue(found.isPresent(), missing);
        kcat = found.get();
    }

    static Stream<Arguments> brokersAndCodecs() {
        return GroupClients.kinds().flatMap(kind -> Stream.of("none", "gzip", "snappy", "lz4", "zstd")
                .map(codec -> Arguments.of(kind, codec)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("brokersAndCodecs")
    void kcatReadsBackExactlyTheKeysValuesAndHeadersItProducedWithEachCodec(BrokerKind kind, String codec) {
        // librdkafka enables its LZ4 feature only when ApiVersions lists FindCoordinator (its marker of a 0.10+
        // broker); without it -z lz4 silently produces uncompressed batches, which the stored-codec check catches.
        // Given
        BrokerProcess broker = kind.shared();
        String topic = createTopic(broker, "kcat-" + codec, 1);
        List<String> lines = IntStream.range(0, RECORDS)
                .mapToObj(i -> "key-" + i + ":value " + i + " " + "abcdefgh".repeat(8))
                .toList();

        // When
        Result produced = kcat(String.join("\n", lines) + "\n", "-P", "-b", broker.bootstrapServers(), "-t", topic,
                "-z", codec, "-X", "message.timeout.ms=15000", "-K:",
                "-H", "trace=abc", "-H", "codec=" + codec, "-H", "empty=");
        Result consumed = kcat("", "-C", "-b", broker.bootstrapServers(), "-t", topic, "-p", "0",
                "-o", "beginning", "-e", "-q", "-f", "%o %k=%s [%h]\\n");

        // Then
        assertThat(produced.exitCode()).as("%s", produced).isZero();
        assertThat(produced.stderr()).as("%s", produced).doesNotContain("ERROR");
        assertThat(consumed.exitCode()).as("%s", consumed).isZero();
        List<String> expected = IntStream.range(0, RECORDS)
                .mapToObj(i -> i + " key-" + i + "=value " + i + " " + "abcdefgh".repeat(8)
                        + " [trace=abc,codec=" + codec + ",empty=]")
                .toList();
        assertThat(consumed.stdout().lines().toList()).as("%s", consumed).isEqualTo(expected);
        assertThat(storedCodecs(broker, topic)).as("codecs of the stored batches").containsOnly(codec);
        noLeaks(broker);
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.group.GroupClients#kinds")
    void kcatConsumesLz4BatchesWrittenByTheJavaProducer(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = createTopic(broker, "kcat-lz4-java", 1);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
                ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4", ProducerConfig.LINGER_MS_CONFIG, 50),
                new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < RECORDS; i++) {
                producer.send(new ProducerRecord<>(topic, 0, "key-" + i, "value " + i + " " + "abcdefgh".repeat(8)));
            }
            producer.flush();
        }

        // When
        Result consumed = kcat("", "-C", "-b", broker.bootstrapServers(), "-t", topic, "-p", "0",
                "-o", "beginning", "-e", "-q", "-f", "%o %k=%s\\n");

        // Then
        assertThat(storedCodecs(broker, topic)).as("codecs of the stored batches").containsOnly("lz4");
        assertThat(consumed.exitCode()).as("%s", consumed).isZero();
        assertThat(consumed.stdout().lines().toList()).as("%s", consumed).isEqualTo(IntStream.range(0, RECORDS)
                .mapToObj(i -> i + " key-" + i + "=value " + i + " " + "abcdefgh".repeat(8)).toList());
        noLeaks(broker);
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.group.GroupClients#kinds")
    void kcatListsTheTopicWithItsPartitionsLeaderAndReplicas(BrokerKind kind) {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = createTopic(broker, "kcat-list", 3);

        // When
        Result listed = kcat("", "-L", "-b", broker.bootstrapServers(), "-t", topic);

        // Then
        assertThat(listed.exitCode()).as("%s", listed).isZero();
        List<String> out = listed.stdout().lines().toList();
        assertThat(out).as("%s", listed).startsWith(
                "Metadata for " + topic + " (from broker 1: " + broker.bootstrapServers() + "/1):",
                " 1 brokers:");
        assertThat(out.get(2)).as("%s", listed).startsWith("  broker 1 at " + broker.bootstrapServers());
        assertThat(out.subList(3, out.size())).as("%s", listed).containsExactly(
                " 1 topics:",
                "  topic \"" + topic + "\" with 3 partitions:",
                "    partition 0, leader 1, replicas: 1, isrs: 1",
                "    partition 1, leader 1, replicas: 1, isrs: 1",
                "    partition 2, leader 1, replicas: 1, isrs: 1");
        noLeaks(broker);
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.group.GroupClients#kinds")
    void kcatIdempotentProducerGetsAProducerIdAndWritesSequencedBatches(BrokerKind kind) {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = createTopic(broker, "kcat-idempotent", 1);
        List<String> lines = IntStream.range(0, RECORDS).mapToObj(i -> "k" + i + ":v" + i).toList();

        // When
        Result produced = kcat(String.join("\n", lines) + "\n", "-P", "-b", broker.bootstrapServers(), "-t", topic,
                "-z", "gzip", "-X", "enable.idempotence=true", "-X", "message.timeout.ms=15000", "-K:");
        Result consumed = kcat("", "-C", "-b", broker.bootstrapServers(), "-t", topic, "-p", "0",
                "-o", "beginning", "-e", "-q", "-f", "%o %k=%s\\n");

        // Then
        assertThat(produced.exitCode()).as("%s", produced).isZero();
        assertThat(produced.stderr()).as("%s", produced).doesNotContain("ERROR", "failed");
        assertThat(consumed.stdout().lines().toList()).as("%s", consumed).isEqualTo(IntStream.range(0, RECORDS)
                .mapToObj(i -> i + " k" + i + "=v" + i).toList());
        List<String> batches = dumpBatches(broker, topic);
        assertThat(batches.get(0)).as("first batch").contains("baseSequence: 0 ");
        assertThat(batches).as("stored batches").allSatisfy(batch -> assertThat(batch)
                .containsPattern(" producerId: [0-9]+ producerEpoch: 0 ")
                .contains(" compresscodec: gzip "));
        assertThat(batches.stream().map(batch -> batch.replaceAll(".* producerId: ([0-9]+) .*", "$1")).distinct())
                .as("one producer id for the whole run").hasSize(1);
        noLeaks(broker);
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.group.GroupClients#kinds")
    void kcatBalancedConsumerReadsEveryPartitionCommitsItsOffsetsAndResumesFromThem(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = createTopic(broker, "kcat-group", 3);
        String group = "kcat-group-" + UUID.randomUUID().toString().substring(0, 8);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(), ProducerConfig.LINGER_MS_CONFIG, 5),
                new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < RECORDS; i++) {
                producer.send(new ProducerRecord<>(topic, i % 3, null, "value-" + i));
            }
            producer.flush();
        }

        // When: librdkafka's KafkaConsumer (subscribe, group rebalance, auto-commit, final commit on close)
        Result consumed = kcat("", "-b", broker.bootstrapServers(), "-G", group, "-X", "auto.offset.reset=earliest",
                "-e", "-q", "-f", "%p %o %s\\n", topic);

        // Then
        assertThat(consumed.exitCode()).as("%s", consumed).isZero();
        for (int p = 0; p < 3; p++) {
            String prefix = p + " ";
            List<String> expected = new ArrayList<>();
            for (int i = p; i < RECORDS; i += 3) {
                expected.add(p + " " + expected.size() + " value-" + i);
            }
            assertThat(consumed.stdout().lines().filter(line -> line.startsWith(prefix)).toList())
                    .as("partition %d of %s", p, consumed).isEqualTo(expected);
        }
        Map<TopicPartition, OffsetAndMetadata> committed;
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                broker.bootstrapServers()))) {
            committed = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                    .get(30, TimeUnit.SECONDS);
        }
        assertThat(committed).as("offsets kcat committed in %s", group).hasSize(3).allSatisfy((tp, offset) ->
                assertThat(offset.offset()).as("%s", tp).isEqualTo((RECORDS - tp.partition() + 2) / 3));

        // When: more records, and kcat in the same group again
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()),
                new StringSerializer(), new StringSerializer())) {
            for (int i = RECORDS; i < RECORDS + 3; i++) {
                producer.send(new ProducerRecord<>(topic, i % 3, null, "value-" + i));
            }
            producer.flush();
        }
        Result resumed = kcat("", "-b", broker.bootstrapServers(), "-G", group, "-X", "auto.offset.reset=earliest",
                "-e", "-q", "-f", "%p %o %s\\n", topic);

        // Then: it starts at the committed offsets
        assertThat(resumed.exitCode()).as("%s", resumed).isZero();
        assertThat(resumed.stdout().lines().sorted().toList()).as("%s", resumed).containsExactly(
                "0 167 value-501", "1 167 value-502", "2 166 value-500");
        noLeaks(broker);
    }

    private static String createTopic(BrokerProcess broker, String prefix, int partitions) {
        String topic = prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                broker.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError("Could not create " + topic + " on " + broker.bootstrapServers() + ": " + e, e);
        }
        return topic;
    }

    /** The {@code compresscodec} of every batch in partition 0's first segment, as Kafka's DumpLogSegments reads it. */
    private static List<String> storedCodecs(BrokerProcess broker, String topic) {
        return dumpBatches(broker, topic).stream()
                .map(line -> line.replaceAll(".* compresscodec: (\\S+) .*", "$1"))
                .toList();
    }

    /** One line per batch of partition 0's first segment, as Kafka's DumpLogSegments prints it. */
    private static List<String> dumpBatches(BrokerProcess broker, String topic) {
        Path segment = broker.dataDir().resolve(topic + "-0").resolve("00000000000000000000.log");
        JavaTool.Result dump = KafkaDistribution.tool("kafka.tools.DumpLogSegments")
                .args("--files", segment.toString()).timeout(Duration.ofSeconds(40)).build().run();
        assertThat(dump.exitCode()).as("%s", dump).isZero();
        List<String> batches = dump.stdout().lines().filter(line -> line.startsWith("baseOffset:")).toList();
        assertThat(batches).as("%s", dump).isNotEmpty();
        return batches;
    }

    /** Runs kcat with {@code stdin} as its input; kills it by PID if it outlives {@link #KCAT_TIMEOUT}. */
    private Result kcat(String stdin, String... args) {
        Path dir = TestDirectories.createTempDirectory("cairn-kcat-");
        try {
            Path in = Files.writeString(dir.resolve("stdin"), stdin, StandardCharsets.UTF_8);
            Path out = dir.resolve("stdout");
            Path err = dir.resolve("stderr");
            List<String> command = new ArrayList<>(List.of(kcat.toString()));
            command.addAll(List.of(args));
            Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectInput(in.toFile())
                    .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            if (!process.waitFor(KCAT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new AssertionError("kcat " + command + " (pid " + process.pid() + ") did not finish within "
                        + KCAT_TIMEOUT.toSeconds() + " s and was killed; stdout:\n" + Files.readString(out)
                        + "\nstderr:\n" + Files.readString(err));
            }
            return new Result(command, process.exitValue(), Files.readString(out), Files.readString(err));
        } catch (IOException e) {
            throw new UncheckedIOException("Could not run " + kcat, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("Interrupted while running kcat", e);
        } finally {
            TestDirectories.deleteRecursively(dir);
        }
    }

    private static void noLeaks(BrokerProcess broker) {
        assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
    }

    /** What one kcat run printed. */
    private record Result(List<String> command, int exitCode, String stdout, String stderr) {

        @Override
        public String toString() {
            String stdoutHead = stdout.length() > 2000 ? stdout.substring(0, 2000) + "..." : stdout;
            return String.join(" ", command) + "\nexit code " + exitCode + "\n--- stdout ---\n" + stdoutHead
                    + "\n--- stderr (distinct lines, with counts) ---\n" + distinctLines(stderr);
        }

        private static String distinctLines(String text) {
            Map<String, Long> counts = text.lines().collect(Collectors.groupingBy(line -> line,
                    LinkedHashMap::new, Collectors.counting()));
            StringBuilder out = new StringBuilder();
            counts.forEach((line, count) -> out.append(count).append(" x ").append(line).append('\n'));
            return out.toString();
        }
    }
}
