package io.cairn.compat.group;

import static io.cairn.compat.group.GroupClients.TIMEOUT_S;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.cairn.compat.harness.KafkaHalfInFaults;
import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.KafkaDistribution;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * librdkafka's KIP-848 consumer ({@code group.protocol=consumer}, GA in librdkafka 2.10) against Cairn and the
 * reference Kafka with the same scenario: two members of Confluent's Node.js client ({@code
 * @confluentinc/kafka-javascript}, which builds the librdkafka its npm package carries; {@code .ci/kafka-javascript}
 * installs it) join a group on a 6-partition topic one after the other, the first giving up 3 of its 6 partitions to
 * the second (the broker's assignor, librdkafka's incremental revocation), read every
 * record exactly once with their commits, Admin and {@code kafka-consumer-groups --describe} show a consumer-type
 * group with both members and no lag; one member leaves, the other takes its partitions over and reads on where the
 * leaver's commits stopped. The script ({@code group/rdkafka_kip848.js}) runs both members and answers the test's
 * commands on standard input. One node per kind, with {@code group.consumer.heartbeat.interval.ms=500}. The members
 * start where nothing is committed at the earliest offset: {@code auto.offset.reset} is in the client's topic
 * configuration, since the Node.js client makes that object librdkafka's {@code default_topic_conf}, dropping the topic
 * properties of the global one (given there, with an empty topic configuration, the reset was librdkafka's default,
 * latest, and a member whose ListOffsets came after the test's first records read none of them: issue 22).
 *
 * <p>The client is looked up in {@code $CAIRN_KAFKA_JAVASCRIPT_DIR} or {@code ~/.cache/cairn/kafka-javascript-1.10.1}
 * (where {@code .ci/kafka-javascript} puts it). When it or {@code node} is missing the test is skipped, unless the
 * environment variable {@value #REQUIRE} is set (as {@code .ci/run} does after installing it), in which case it fails.
 */
@Timeout(180)
@ExtendWith(BrokerLogsExtension.class)
class LibrdkafkaConsumerProtocolIT {

    /** The temp files and directories of this class's tests, removed after them. */
    @TempDir
    static Path tmp;

    static final String REQUIRE = "CAIRN_REQUIRE_KAFKA_JAVASCRIPT";
    static final String DIR = "CAIRN_KAFKA_JAVASCRIPT_DIR";
    static final String VERSION = "1.10.1";
    private static final String SCRIPT = "group/rdkafka_kip848.js";
    private static final String GROUPS_TOOL = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand";
    private static final int PARTITIONS = 6;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Map<BrokerKind, BrokerCluster> NODES = new EnumMap<>(BrokerKind.class);

    @AfterAll
    static void stopNodes() {
        NODES.values().forEach(BrokerCluster::close);
        NODES.clear();
    }

    private static synchronized BrokerProcess node(BrokerKind kind) {
        BrokerCluster started = NODES.get(kind);
        if (started == null) {
            started = BrokerCluster.create(kind, 1, Map.of("offsets.topic.replication.factor", "1",
                    "group.consumer.heartbeat.interval.ms", "500", "group.consumer.min.heartbeat.interval.ms", "500"));
            try {
                started.start();
            } catch (RuntimeException | AssertionError e) {
                started.close();
                throw e;
            }
            NODES.put(kind, started);
        }
        return started.node(1);
    }

    @KafkaHalfInFaults
    void twoLibrdkafkaMembersShareThePartitionsAndTheOneLeftTakesOverAsOnKafka(BrokerKind kind) throws Exception {
        // Given: a librdkafka member of the consumer protocol in a group on 6 partitions, then a second one to which
        // the first gives up 3 of its partitions
        Optional<Path> modules = nodeModules();
        if (System.getenv(REQUIRE) == null) {
            assumeTrue(modules.isPresent(), "no node with @confluentinc/kafka-javascript in " + installDir()
                    + " (run .ci/kafka-javascript)");
        }
        assertThat(modules).as("node with @confluentinc/kafka-javascript in %s (%s is set)", installDir(), REQUIRE)
                .isPresent();
        BrokerProcess broker = node(kind);
        String topic = GroupClients.createTopic(broker, "rdkafka848", PARTITIONS);
        String group = GroupClients.uniqueName("rdkafka848");
        try (Members members = Members.start(modules.get(), broker, topic, group, "rdkafka-a", "rdkafka-b");
                Admin admin = GroupClients.admin(broker)) {
            members.send("start rdkafka-a");
            JsonNode alone = members.awaitStatus(status -> assertThat(partitions(status, "rdkafka-a"))
                    .hasSize(PARTITIONS));
            members.send("start rdkafka-b");
            JsonNode joined = members.awaitStatus(status -> {
                assertThat(partitions(status, "rdkafka-a")).hasSize(3);
                assertThat(partitions(status, "rdkafka-b")).hasSize(3);
            });

            // When: they read 300 records; then rdkafka-b leaves and 300 more records arrive
            GroupClients.produce(broker, topic, PARTITIONS, 300);
            members.awaitStatus(status -> assertThat(read(status, "rdkafka-a") + read(status, "rdkafka-b"))
                    .isEqualTo(300));
            ConsumerGroupDescription two = admin.describeConsumerGroups(List.of(group)).describedGroups().get(group)
                    .get(TIMEOUT_S, TimeUnit.SECONDS);
            JavaTool.Result describeTwo = groupsTool(broker, "--describe", "--group", group);
            JavaTool.Result types = groupsTool(broker, "--list", "--type");
            members.send("close rdkafka-b");
            members.next("closed");
            JsonNode tookOver = members.awaitStatus(status -> assertThat(partitions(status, "rdkafka-a"))
                    .hasSize(PARTITIONS));
            GroupClients.produce(broker, topic, PARTITIONS, 300, 300);
            members.awaitStatus(status -> assertThat(read(status, "rdkafka-a") + read(status, "rdkafka-b"))
                    .isEqualTo(600));
            ConsumerGroupDescription one = admin.describeConsumerGroups(List.of(group)).describedGroups().get(group)
                    .get(TIMEOUT_S, TimeUnit.SECONDS);
            JavaTool.Result describeOne = groupsTool(broker, "--describe", "--group", group);
            members.send("exit");
            JsonNode done = members.next("done");

            // Then: every record read once, the first 300 by both members, the next 300 by rdkafka-a alone
            assertThat(joined.get("librdkafka").asText()).as("librdkafka's version").matches("2\\.(1\\d|[2-9]\\d)\\..*");
            assertThat(partitions(alone, "rdkafka-b")).isEmpty();
            assertThat(partitions(joined, "rdkafka-a")).doesNotContainAnyElementsOf(partitions(joined, "rdkafka-b"));
            assertThat(partitions(tookOver, "rdkafka-a")).containsExactly(0, 1, 2, 3, 4, 5);
            List<String> readByA = values(done.get("read").get("rdkafka-a"));
            List<String> readByB = values(done.get("read").get("rdkafka-b"));
            List<String> all = new ArrayList<>(readByA);
            all.addAll(readByB);
            assertThat(new HashSet<>(all)).as("distinct records read").hasSize(all.size());
            assertThat(all).containsExactlyInAnyOrderElementsOf(
                    IntStream.range(0, 600).mapToObj(GroupClients::value).toList());
            assertThat(readByB).as("rdkafka-b's records").hasSize(150)
                    .allSatisfy(value -> assertThat(number(value)).isLessThan(300));
            assertThat(readByA).as("rdkafka-a's records").hasSize(450)
                    .containsAll(IntStream.range(300, 600).mapToObj(GroupClients::value).toList());
            for (String member : List.of("rdkafka-a", "rdkafka-b")) {
                assertThat(done.get("members").get(member).get("errors")).as("errors of %s: %s", member, done)
                        .isEmpty();
                assertThat(done.get("members").get(member).get("state").asText()).isEqualTo("closed");
                // librdkafka's consumer protocol hands out partitions incrementally (the classic one's default is
                // eager); NONE is the revocation of a closing member
                assertThat(values(done.get("members").get(member).get("rebalanceProtocols")))
                        .contains("COOPERATIVE").doesNotContain("EAGER");
            }

            // Then: a consumer-type group, described by Admin and the tool as on Kafka
            assertThat(two.type()).isEqualTo(GroupType.CONSUMER);
            assertThat(two.groupState()).isEqualTo(GroupState.STABLE);
            assertThat(two.partitionAssignor()).isEqualTo("uniform");
            assertThat(two.members()).extracting(MemberDescription::clientId)
                    .containsExactlyInAnyOrder("rdkafka-a", "rdkafka-b");
            assertThat(two.members()).allSatisfy(m -> assertThat(m.assignment().topicPartitions()).hasSize(3));
            assertThat(one.type()).isEqualTo(GroupType.CONSUMER);
            assertThat(one.groupState()).isEqualTo(GroupState.STABLE);
            assertThat(one.members()).singleElement().satisfies(m -> {
                assertThat(m.clientId()).isEqualTo("rdkafka-a");
                assertThat(m.assignment().topicPartitions()).hasSize(PARTITIONS);
            });
            assertDescribed(describeTwo, group, topic, 50, List.of("rdkafka-a", "rdkafka-b"));
            assertDescribed(describeOne, group, topic, 100, List.of("rdkafka-a"));
            assertThat(rows(types, group)).as("%s", types).containsExactly(List.of(group, "Consumer"));
        }
        assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
    }

    /**
     * The tool's table: one row per partition, committed at {@code committed} with no lag, owned by a member with one
     * of {@code clients}, and every one of them owning some.
     */
    private static void assertDescribed(JavaTool.Result describe, String group, String topic, int committed,
            List<String> clients) {
        assertThat(describe.exitCode()).as("%s", describe).isZero();
        assertThat(rows(describe, "GROUP")).as("%s", describe).first().isEqualTo(List.of("GROUP", "TOPIC",
                "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"));
        List<List<String>> rows = rows(describe, group);
        assertThat(rows).as("%s", describe).hasSize(PARTITIONS).allSatisfy(row -> {
            assertThat(row).hasSize(9);
            assertThat(row.subList(1, 2)).containsExactly(topic);
            assertThat(row.subList(3, 6)).containsExactly(String.valueOf(committed), String.valueOf(committed), "0");
            assertThat(row.get(6)).isNotEqualTo("-");
        });
        assertThat(rows).extracting(row -> row.get(2)).containsExactlyInAnyOrder("0", "1", "2", "3", "4", "5");
        assertThat(rows).extracting(row -> row.get(8)).as("%s", describe)
                .containsOnly(clients.toArray(String[]::new)).containsAll(clients);
    }

    private static List<Integer> partitions(JsonNode status, String member) {
        List<Integer> result = new ArrayList<>();
        status.get("members").get(member).get("assignment").forEach(p -> result.add(p.asInt()));
        return result;
    }

    private static int read(JsonNode status, String member) {
        return status.get("members").get(member).get("read").asInt();
    }

    private static List<String> values(JsonNode array) {
        List<String> result = new ArrayList<>();
        array.forEach(value -> result.add(value.asText()));
        return result;
    }

    private static int number(String value) {
        return Integer.parseInt(value.substring(value.lastIndexOf('-') + 1));
    }

    private static JavaTool.Result groupsTool(BrokerProcess broker, String... args) {
        List<String> all = new ArrayList<>(List.of("--bootstrap-server", broker.bootstrapServers()));
        all.addAll(List.of(args));
        return KafkaDistribution.tool(GROUPS_TOOL).args(all.toArray(String[]::new)).timeout(Duration.ofSeconds(60))
                .build().run();
    }

    /** The rows of a table the tool printed whose first column is {@code first}, split into columns. */
    private static List<List<String>> rows(JavaTool.Result result, String first) {
        return result.stdout().lines().map(String::strip).map(line -> List.of(line.split("\\s+")))
                .filter(columns -> columns.get(0).equals(first)).toList();
    }

    /** Where {@code .ci/kafka-javascript} installs the client. */
    static Path installDir() {
        String dir = System.getenv(DIR);
        if (dir != null && !dir.isBlank()) {
            return Paths.get(dir);
        }
        String cache = System.getenv("XDG_CACHE_HOME");
        Path root = cache != null && !cache.isBlank() ? Paths.get(cache)
                : Paths.get(System.getProperty("user.home"), ".cache");
        return root.resolve("cairn").resolve("kafka-javascript-" + VERSION);
    }

    /** The {@code node_modules} holding the client, when {@code node} loads it from there. */
    private static Optional<Path> nodeModules() {
        Path modules = installDir().resolve("node_modules");
        if (!Files.isDirectory(modules.resolve("@confluentinc").resolve("kafka-javascript"))) {
            return Optional.empty();
        }
        try {
            ProcessBuilder probe = new ProcessBuilder("node", "-e", "require('@confluentinc/kafka-javascript')")
                    .redirectErrorStream(true);
            probe.environment().put("NODE_PATH", modules.toString());
            Process p = probe.start();
            p.getInputStream().readAllBytes();
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0 ? Optional.of(modules) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /** The script's process: commands written to its standard input, its JSON lines read from its output. */
    private static final class Members implements AutoCloseable {

        private final Process process;
        private final Writer commands;
        private final BlockingQueue<JsonNode> lines = new LinkedBlockingQueue<>();
        private final Path stderr;

        private Members(Process process, Path stderr) {
            this.process = process;
            this.stderr = stderr;
            this.commands = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            Thread reader = new Thread(() -> {
                try (BufferedReader in = new BufferedReader(
                        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String line = in.readLine(); line != null; line = in.readLine()) {
                        lines.add(JSON.readTree(line));
                    }
                } catch (IOException e) {
                    // the process ended
                }
            }, "rdkafka848-stdout");
            reader.setDaemon(true);
            reader.start();
        }

        static Members start(Path modules, BrokerProcess broker, String topic, String group, String... names)
                throws IOException {
            Path dir = Files.createTempDirectory(tmp, "rdkafka848");
            Path script = dir.resolve("rdkafka_kip848.js");
            try (InputStream in = LibrdkafkaConsumerProtocolIT.class.getClassLoader().getResourceAsStream(SCRIPT)) {
                Files.copy(in, script);
            }
            List<String> command = new ArrayList<>(List.of("node", script.toString(), broker.bootstrapServers(),
                    topic, group));
            command.addAll(List.of(names));
            Path stderr = dir.resolve("stderr.txt");
            ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile())
                    .redirectError(stderr.toFile());
            builder.environment().put("NODE_PATH", modules.toString());
            // librdkafka's group coordination log, in the stderr a failure message shows
            builder.environment().putIfAbsent("RDKAFKA_DEBUG", "cgrp");
            return new Members(builder.start(), stderr);
        }

        void send(String command) throws IOException {
            commands.write(command + "\n");
            commands.flush();
        }

        /** The next line of {@code event}, skipping others; fails after 60 s or when the script has ended. */
        JsonNode next(String event) throws Exception {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (System.nanoTime() < deadline) {
                JsonNode line = lines.poll(100, TimeUnit.MILLISECONDS);
                if (line != null && event.equals(line.path("event").asText())) {
                    return line;
                }
                if (line == null && !process.isAlive() && lines.isEmpty()) {
                    throw new AssertionError("the script ended (exit " + process.exitValue() + ") before \""
                            + event + "\"; " + stderr());
                }
            }
            throw new AssertionError("no \"" + event + "\" from the script in 60 s; " + stderr());
        }

        /** Asks for the members' status until {@code assertion} holds of it (60 s at most); returns that status. */
        JsonNode awaitStatus(StatusAssertion assertion) {
            JsonNode[] last = new JsonNode[1];
            try {
                await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
                    send("status");
                    last[0] = next("status");
                    assertThat(last[0].get("members").toString()).as("errors").doesNotContain("\"errors\":[\"");
                    assertion.check(last[0]);
                });
            } catch (ConditionTimeoutException e) {
                throw new AssertionError(e.getMessage() + "\nlast status: " + last[0] + "\n" + stderr(), e);
            }
            return last[0];
        }

        /** The last 150 lines of the script's stderr (librdkafka's log), and where the whole is. */
        private String stderr() {
            try {
                List<String> all = Files.readAllLines(stderr, StandardCharsets.UTF_8);
                return "stderr (" + stderr + ", last 150 of " + all.size() + " lines):\n"
                        + String.join("\n", all.subList(Math.max(0, all.size() - 150), all.size()));
            } catch (IOException e) {
                return "(stderr unreadable: " + e + ")";
            }
        }

        @Override
        public void close() throws InterruptedException {
            if (process.isAlive()) {
                process.destroy();
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            }
        }
    }

    /** An assertion on one status line of the script. */
    @FunctionalInterface
    private interface StatusAssertion {
        void check(JsonNode status) throws Exception;
    }
}
