package io.cairn.compat.txn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * librdkafka's transactional producer, through confluent-kafka-python (Debian's {@code python3-confluent-kafka}),
 * against Cairn and the reference Kafka: a committed, an aborted and another committed transaction, read back by
 * librdkafka consumers with {@code isolation.level} read_committed (the committed records only) and
 * read_uncommitted (all of them), in offset order.
 *
 * <p>When no Python with {@code confluent_kafka} is found the test is skipped, unless the environment variable
 * {@value #REQUIRE} is set (as {@code .ci/run} does after installing the package), in which case it fails.
 */
@Timeout(180)
@ExtendWith(BrokerLogsExtension.class)
class LibrdkafkaTransactionsIT {

    /** The temp files and directories of this class's tests, removed after them. */
    @TempDir
    static Path tmp;

    static final String REQUIRE = "CAIRN_REQUIRE_CONFLUENT_KAFKA";
    private static final String SCRIPT = "txn/rdkafka_transactions.py";

    @ParameterizedTest
    @MethodSource("io.cairn.compat.txn.TransactionsIT#kinds")
    void librdkafkasTransactionsAreCommittedAndAbortedAsOnKafka(BrokerKind kind) throws Exception {
        // Given
        Optional<String> python = python();
        if (System.getenv(REQUIRE) == null) {
            assumeTrue(python.isPresent(), "no python3 with confluent_kafka (apt-get install python3-confluent-kafka)");
        }
        assertThat(python).as("python3 with confluent_kafka (%s is set)", REQUIRE).isPresent();
        BrokerProcess broker = kind.shared();
        String topic = TransactionsIT.createTopic(broker, "rdkafka-txn", 1);
        Path dir = Files.createTempDirectory(tmp, "rdkafka-txn");
        Path script = dir.resolve("rdkafka_transactions.py");
        try (InputStream in = LibrdkafkaTransactionsIT.class.getClassLoader().getResourceAsStream(SCRIPT)) {
            Files.copy(in, script);
        }

        // When
        String output = run(List.of(python.get(), script.toString(), broker.bootstrapServers(), topic,
                TransactionsIT.unique("rdkafka-txn")), dir);

        // Then
        List<String> committed = IntStream.range(0, 13).mapToObj(i -> "committed-" + i).collect(Collectors.toList());
        List<String> uncommitted = new ArrayList<>(committed.subList(0, 10));
        IntStream.range(0, 5).forEach(i -> uncommitted.add("aborted-" + i));
        uncommitted.addAll(committed.subList(10, 13));
        assertThat(output.strip()).isEqualTo("{\"committed\": " + json(committed) + ", \"uncommitted\": "
                + json(uncommitted) + "}");
        assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
    }

    private static String json(List<String> values) {
        return values.stream().map(v -> "\"" + v + "\"").collect(Collectors.joining(", ", "[", "]"));
    }

    /** A Python 3 that imports confluent_kafka: Debian's first, then the one on PATH. */
    private static Optional<String> python() {
        for (String candidate : List.of("/usr/bin/python3", "python3")) {
            try {
                Process p = new ProcessBuilder(candidate, "-c", "import confluent_kafka").redirectErrorStream(true)
                        .start();
                p.getInputStream().readAllBytes();
                if (p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0) {
                    return Optional.of(candidate);
                }
            } catch (IOException e) {
                // not this one
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Optional.empty();
            }
        }
        return Optional.empty();
    }

    private static String run(List<String> command, Path dir) throws Exception {
        Path out = dir.resolve("out.txt");
        Path err = dir.resolve("err.txt");
        Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectOutput(out.toFile())
                .redirectError(err.toFile()).start();
        if (!process.waitFor(150, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("the librdkafka script did not finish in 150 s; stderr: "
                    + Files.readString(err, StandardCharsets.UTF_8));
        }
        String stdout = Files.readString(out, StandardCharsets.UTF_8);
        assertThat(process.exitValue()).as("exit code of %s; stdout: %s; stderr: %s", command, stdout,
                Files.readString(err, StandardCharsets.UTF_8)).isZero();
        return stdout;
    }
}
