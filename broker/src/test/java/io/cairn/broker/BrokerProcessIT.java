package io.cairn.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The broker as a user runs it: {@code java -jar broker/target/cairn-broker-<version>.jar}, a separate process whose
 * stdout is the log. Measures the time from process start to the first ApiVersions answer.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class BrokerProcessIT {

    private static final Pattern AWAITING = Pattern.compile("Awaiting socket connections on (\\S+):(\\d+) ");
    /** Kafka's layout {@code [%d] %p %m (%c)%n}; a multi-line message puts the logger after its last line. */
    private static final Pattern LOG_LINE = Pattern.compile("^\\[\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2},\\d{3}] "
            + "(INFO|WARN|ERROR|DEBUG|TRACE) .* \\([\\w.$]+\\)$");
    private static final Pattern LOG_LINE_START = Pattern.compile("^\\[\\d{4}-\\d{2}-\\d{2} "
            + "\\d{2}:\\d{2}:\\d{2},\\d{3}] (INFO|WARN|ERROR|DEBUG|TRACE) ");

    @TempDir
    Path workDir;

    private Process process;
    private Path logFile;

    @AfterEach
    void stopProcess() throws Exception {
        if (process != null && process.isAlive()) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        if (logFile != null) {
            Files.write(Path.of("target", "BrokerProcessIT-last.log"), output());
        }
    }

    @Test
    void shouldStartWithoutArgumentsAnswerApiVersionsAndStopOnSigterm() throws Exception {
        // Given
        long startNanos = System.nanoTime();
        start(List.of("--override", "listeners=PLAINTEXT://127.0.0.1:0"));
        int port = awaitPort();
        ApiVersionsResponseData answer = firstApiVersionsAnswer(port);
        long startToAnswerMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
        Files.writeString(Path.of("target", "broker-start-to-first-api-versions-ms.txt"), startToAnswerMs + "\n");
        System.out.println("Broker start to first ApiVersions answer: " + startToAnswerMs + " ms");

        // When
        process.destroy();

        // Then
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).as("stopped after SIGTERM").isTrue();
        assertThat(answer.errorCode()).isZero();
        assertThat(output()).anyMatch(line -> line.contains("Cairn broker started (node.id=1) in "));
        assertThat(output()).anyMatch(line -> line.contains("shut down completed"));
        assertThat(output()).allMatch(line -> LOG_LINE_START.matcher(line).find() || line.startsWith("\t"));
        assertThat(output()).filteredOn(line -> line.contains("Cairn broker started"))
                .allMatch(line -> LOG_LINE.matcher(line).matches());
        assertThat(Files.isDirectory(workDir.resolve("data"))).as("data under ./data").isTrue();
    }

    @Test
    void shouldExitWithCodeOneAndOneErrorLineOnAnInvalidPort() throws Exception {
        // Given
        start(List.of("--override", "listeners=PLAINTEXT://:notaport"));

        // When
        boolean exited = process.waitFor(60, TimeUnit.SECONDS);

        // Then
        assertThat(exited).isTrue();
        assertThat(process.exitValue()).isEqualTo(1);
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(errors()).hasSize(1));
        assertThat(errors()).singleElement().asString().contains("listeners", "notaport");
        assertThat(output()).noneMatch(line -> line.startsWith("\tat "));
    }

    @Test
    void shouldExitWithCodeOneAndOneErrorLineOnABadListenerFormat() throws Exception {
        // Given
        start(List.of("--override", "listeners=localhost:9092"));

        // When
        boolean exited = process.waitFor(60, TimeUnit.SECONDS);

        // Then
        assertThat(exited).isTrue();
        assertThat(process.exitValue()).isEqualTo(1);
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(errors()).hasSize(1));
        assertThat(errors()).singleElement().asString().contains("NAME://host:port");
    }

    @Test
    void shouldExitWithCodeOneAndOneErrorLineWhenThePortIsTaken() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            // Given
            start(List.of("--override", "listeners=PLAINTEXT://127.0.0.1:" + taken.getLocalPort()));

            // When
            boolean exited = process.waitFor(60, TimeUnit.SECONDS);

            // Then
            assertThat(exited).isTrue();
            assertThat(process.exitValue()).isEqualTo(1);
            await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(errors()).hasSize(1));
            assertThat(errors()).singleElement().asString().contains("Cannot bind listener PLAINTEXT://127.0.0.1:"
                    + taken.getLocalPort());
        }
    }

    @Test
    void shouldWarnOnceAboutAnUnknownKeyAndStillStart() throws Exception {
        // Given
        Path properties = workDir.resolve("server.properties");
        Files.writeString(properties, "listeners=PLAINTEXT://127.0.0.1:0\nno.such.key=1\nlog.dirs=" + workDir
                .resolve("kafka-data") + "\n");

        // When
        start(List.of(properties.toString()));
        int port = awaitPort();

        // Then
        assertThat(firstApiVersionsAnswer(port).errorCode()).isZero();
        assertThat(output().stream().filter(line -> line.contains(" WARN ") && line.contains("no.such.key")))
                .hasSize(1);
        assertThat(Files.isDirectory(workDir.resolve("kafka-data"))).isTrue();
    }

    private List<String> errors() {
        return output().stream().filter(line -> line.contains(" ERROR ")).toList();
    }

    private void start(List<String> args) throws IOException {
        String jar = System.getProperty("cairn.broker.jar");
        assertThat(jar).as("system property cairn.broker.jar (set by failsafe)").isNotNull();
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "-Xmx256m", "-jar", Path.of(jar).toAbsolutePath().toString()));
        command.addAll(args);
        // The metrics endpoint on a free port: the default 9404 may be taken by another broker on this machine.
        command.addAll(List.of("--override", "metrics.port=0"));
        // A file, not a pipe: nothing is lost when the process exits while the test is still reading.
        logFile = workDir.resolve("broker.out");
        process = new ProcessBuilder(command).directory(workDir.toFile()).redirectErrorStream(true)
                .redirectOutput(logFile.toFile()).start();
    }

    private List<String> output() {
        try {
            return Files.exists(logFile) ? Files.readAllLines(logFile, StandardCharsets.UTF_8) : List.of();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private int awaitPort() {
        return await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(5))
                .until(this::announcedPort, port -> port > 0);
    }

    private int announcedPort() {
        assertThat(process.isAlive()).as("broker process alive; output: %s", output()).isTrue();
        for (String line : output()) {
            Matcher matcher = AWAITING.matcher(line);
            if (matcher.find()) {
                return Integer.parseInt(matcher.group(2));
            }
        }
        return -1;
    }

    private static ApiVersionsResponseData firstApiVersionsAnswer(int port) throws IOException {
        try (RawConnection connection = new RawConnection("127.0.0.1", port)) {
            connection.sendFrame(KafkaWire.apiVersionsRequest((short) 4, 1));
            return KafkaWire.apiVersionsResponse(connection.readFrame(), (short) 4).body();
        }
    }
}
