package io.cairn.compat.txn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.TestDirectories;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A Kafka Streams word count with {@code exactly_once_v2} ({@link WordCountApp}: a count store with its changelog
 * and a repartition topic) against each broker kind, restarted twice while its input keeps arriving: a clean close
 * and a new instance with the same application id, then a SIGKILL of that instance (run in its own JVM) mid-stream
 * and a third instance on its state directory. On one node and on 3. A read_committed reader of the output must see, for every word,
 * exactly the counts 1, 2, ..., n where n is how often the word was sent: a duplicate would repeat or skip a count,
 * a lost update would stop short.
 */
@Timeout(360)
@ExtendWith(BrokerLogsExtension.class)
@Tag("faults")
class StreamsExactlyOnceIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(120);
    private static final int PARTITIONS = 2;
    private static final int WORDS_PER_LINE = 4;
    private static final int VOCABULARY = 40;
    /** Output records each instance must have committed before it is stopped. */
    private static final int PROGRESS_PER_INSTANCE = 400;

    static Stream<BrokerKind> kinds() {
        return TransactionsIT.kinds();
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void wordCountSurvivesACleanRestartAndAHardKillWithExactCountsOnOneNode(BrokerKind kind) throws Exception {
        BrokerProcess broker = kind.shared();
        cleanRestartThenHardKill(broker.bootstrapServers(), (short) 1);
        assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
    }

    /**
     * The same on 3 nodes: the internal topics Streams creates (changelog, repartition) take the brokers'
     * default.replication.factor 3, {@code __transaction_state} and {@code __consumer_offsets} are at 3 with
     * min.isr 2, so markers and offsets go to other brokers.
     */
    @ParameterizedTest
    @MethodSource("kinds")
    void wordCountSurvivesACleanRestartAndAHardKillWithExactCountsOnThreeNodes(BrokerKind kind) throws Exception {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("offsets.topic.replication.factor", "3");
        config.put("default.replication.factor", "3");
        config.put("transaction.state.log.replication.factor", "3");
        config.put("transaction.state.log.min.isr", "2");
        try (BrokerCluster cluster = BrokerCluster.create(kind, 3, config)) {
            cluster.start();
            cleanRestartThenHardKill(cluster.bootstrapServers(), (short) 3);
        }
    }

    private static void cleanRestartThenHardKill(String bootstrapServers, short replication) throws Exception {
        // Given
        String applicationId = "wordcount-" + UUID.randomUUID().toString().substring(0, 8);
        String input = applicationId + "-lines";
        String output = applicationId + "-counts";
        createTopics(bootstrapServers, replication, input, output);
        Path stateDir = TestDirectories.createTempDirectory("cairn-streams-");
        try (Feeder feeder = new Feeder(bootstrapServers, input);
             OutputReader counts = new OutputReader(bootstrapServers, output)) {
            feeder.start();

            // When: instance 1 runs, commits some counts and is closed cleanly
            try (KafkaStreams first = startInProcess(bootstrapServers, applicationId, stateDir, input, output)) {
                counts.awaitAtLeast(PROGRESS_PER_INSTANCE);
            }
            // instance 2 (its own JVM, same state dir) commits more counts and is SIGKILLed mid-stream
            long before = counts.records();
            ChildInstance second = ChildInstance.start(bootstrapServers, applicationId, stateDir, input, output);
            try {
                counts.awaitAtLeast(before + PROGRESS_PER_INSTANCE);
            } finally {
                second.kill();
            }
            // instance 3 takes over the killed one's state dir; the input stops once it has made progress too
            try (KafkaStreams third = startInProcess(bootstrapServers, applicationId, stateDir, input, output)) {
                counts.awaitAtLeast(counts.records() + PROGRESS_PER_INSTANCE);
                Map<String, Long> sent = feeder.stopAndCount();

                // Then: every word's committed counts are exactly 1..n
                counts.awaitLastValues(sent);
                assertThat(counts.valuesPerWord()).isEqualTo(consecutiveCounts(sent));
                assertThat(third.state()).isEqualTo(KafkaStreams.State.RUNNING);
            }
        } finally {
            TestDirectories.deleteRecursively(stateDir);
        }
    }

    private static Map<String, List<Long>> consecutiveCounts(Map<String, Long> sent) {
        Map<String, List<Long>> expected = new TreeMap<>();
        sent.forEach((word, n) -> expected.put(word, LongStream.rangeClosed(1, n).boxed().toList()));
        return expected;
    }

    private static KafkaStreams startInProcess(String bootstrapServers, String applicationId, Path stateDir,
                                               String input, String output) {
        KafkaStreams streams = new KafkaStreams(WordCountApp.topology(input, output),
                WordCountApp.config(bootstrapServers, applicationId, stateDir.toString()));
        try {
            streams.start();
            await().atMost(TIMEOUT).until(() -> streams.state() == KafkaStreams.State.RUNNING);
            return streams;
        } catch (RuntimeException | AssertionError e) {
            streams.close(Duration.ofSeconds(10));
            throw e;
        }
    }

    private static void createTopics(String bootstrapServers, short replication, String... topics)
            throws Exception {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        try (Admin admin = Admin.create(props)) {
            List<NewTopic> newTopics = new ArrayList<>();
            for (String topic : topics) {
                newTopics.add(new NewTopic(topic, PARTITIONS, replication));
            }
            admin.createTopics(newTopics).all().get(60, TimeUnit.SECONDS);
        }
    }

    /**
     * Sends lines of {@value #WORDS_PER_LINE} words (seeded, printed on failure) to the input topic from its own
     * thread, a few at a time, until stopped, and counts the words of every acknowledged line.
     */
    private static final class Feeder implements AutoCloseable {

        private static final int LINES_PER_ROUND = 5;
        private static final long PAUSE_MS = 25;

        private final KafkaProducer<String, String> producer;
        private final String topic;
        private final long seed = System.nanoTime();
        private final Map<String, Long> sent = new ConcurrentHashMap<>();
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final AtomicReference<Exception> failure = new AtomicReference<>();
        private final Thread thread = new Thread(this::run, "word-feeder");

        Feeder(String bootstrapServers, String topic) {
            Map<String, Object> props = new HashMap<>();
            props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
            props.put(ProducerConfig.ACKS_CONFIG, "all");
            props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
            this.producer = new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
            this.topic = topic;
        }

        void start() {
            thread.start();
        }

        private void run() {
            Random random = new Random(seed);
            long line = 0;
            try {
                while (running.get()) {
                    for (int i = 0; i < LINES_PER_ROUND; i++, line++) {
                        List<String> words = new ArrayList<>();
                        for (int w = 0; w < WORDS_PER_LINE; w++) {
                            words.add("w" + random.nextInt(VOCABULARY));
                        }
                        producer.send(new ProducerRecord<>(topic, Long.toString(line), String.join(" ", words)))
                                .get(30, TimeUnit.SECONDS);
                        words.forEach(word -> sent.merge(word, 1L, Long::sum));
                    }
                    // paces the input so that it is still arriving at every restart; not a synchronisation
                    Thread.sleep(PAUSE_MS);
                }
            } catch (Exception e) {
                failure.set(e);
            }
        }

        /** Stops sending and returns how often each word was sent; fails if a send failed. */
        Map<String, Long> stopAndCount() throws InterruptedException {
            running.set(false);
            thread.join(TimeUnit.SECONDS.toMillis(60));
            assertThat(failure.get()).as("feeder (seed %d)", seed).isNull();
            assertThat(thread.isAlive()).as("feeder stopped").isFalse();
            return new TreeMap<>(sent);
        }

        @Override
        public void close() throws InterruptedException {
            running.set(false);
            thread.join(TimeUnit.SECONDS.toMillis(60));
            producer.close(Duration.ofSeconds(10));
        }
    }

    /**
     * A read_committed consumer of the output, driven by the test thread: it keeps every count it read per word,
     * in offset order (one word's counts all go to one partition).
     */
    private static final class OutputReader implements AutoCloseable {

        private final KafkaConsumer<String, Long> consumer;
        private final Map<String, List<Long>> values = new TreeMap<>();
        private long records;

        OutputReader(String bootstrapServers, String topic) {
            Map<String, Object> props = new HashMap<>();
            props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
            props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
            props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, IsolationLevel.READ_COMMITTED.toString());
            this.consumer = new KafkaConsumer<>(props, new StringDeserializer(), new LongDeserializer());
            List<TopicPartition> partitions = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++) {
                partitions.add(new TopicPartition(topic, p));
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
        }

        long records() {
            return records;
        }

        Map<String, List<Long>> valuesPerWord() {
            return values;
        }

        void awaitAtLeast(long target) {
            pollUntil(() -> records >= target ? 0 : 1, "at least " + target + " committed counts");
        }

        /** Polls until the last committed count of every word is the number of times it was sent. */
        void awaitLastValues(Map<String, Long> sent) {
            pollUntil(() -> sent.entrySet().stream().filter(e -> !e.getValue().equals(last(e.getKey()))).count(),
                    "the last count of each word equal to how often it was sent " + sent);
        }

        private Long last(String word) {
            List<Long> counts = values.get(word);
            return counts == null || counts.isEmpty() ? null : counts.get(counts.size() - 1);
        }

        private void pollUntil(LongSupplier remaining, String what) {
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (remaining.getAsLong() != 0) {
                assertThat(System.nanoTime()).as("%s within %s; read %d counts: %s", what, TIMEOUT, records,
                        values).isLessThan(deadline);
                for (ConsumerRecord<String, Long> record : consumer.poll(Duration.ofMillis(200))) {
                    values.computeIfAbsent(record.key(), word -> new ArrayList<>()).add(record.value());
                    records++;
                }
            }
        }

        @Override
        public void close() {
            consumer.close(Duration.ofSeconds(10));
        }
    }

    /** A {@link WordCountApp} instance in its own JVM, so that it can be SIGKILLed mid-transaction. */
    private static final class ChildInstance {

        private final Process process;
        private final Path stdout;
        private final Path dir;

        private ChildInstance(Process process, Path stdout, Path dir) {
            this.process = process;
            this.stdout = stdout;
            this.dir = dir;
        }

        static ChildInstance start(String bootstrapServers, String applicationId, Path stateDir, String input,
                                   String output) throws IOException, InterruptedException {
            Path dir = TestDirectories.createTempDirectory("cairn-streams-child-");
            Path stdout = dir.resolve("stdout");
            Process process = new ProcessBuilder(JavaTool.javaExecutable(), "-cp",
                    System.getProperty("java.class.path"), WordCountApp.class.getName(), bootstrapServers,
                    applicationId, stateDir.toString(), input, output)
                    .redirectOutput(stdout.toFile())
                    .redirectError(dir.resolve("stderr").toFile())
                    .start();
            ChildInstance child = new ChildInstance(process, stdout, dir);
            try {
                await().atMost(TIMEOUT).until(() -> child.printed("STATE RUNNING") || !process.isAlive());
                assertThat(process.isAlive()).as("the child instance runs; it printed: %s", child.output()).isTrue();
            } catch (RuntimeException | AssertionError e) {
                child.kill();
                throw e;
            }
            return child;
        }

        private boolean printed(String line) throws IOException {
            return Files.readString(stdout, StandardCharsets.UTF_8).contains(line);
        }

        private String output() throws IOException {
            return Files.readString(stdout, StandardCharsets.UTF_8) + "\n--- stderr ---\n"
                    + Files.readString(dir.resolve("stderr"), StandardCharsets.UTF_8);
        }

        /** SIGKILL (by PID), then waits for the process to be gone. */
        void kill() throws InterruptedException {
            process.destroyForcibly();
            assertThat(process.waitFor(30, TimeUnit.SECONDS)).as("pid %d gone", process.pid()).isTrue();
            TestDirectories.deleteRecursively(dir);
        }
    }
}
