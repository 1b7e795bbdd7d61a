package io.cairn.compat.share;

import io.cairn.testkit.JavaTool;
import io.cairn.testkit.Signals;
import io.cairn.testkit.TestDirectories;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * A share-group member in a JVM of its own, for a test to pause with SIGSTOP once it holds records: a stock
 * {@code KafkaShareConsumer} (explicit acknowledgement) subscribes, accepts every record whose value does not start
 * with {@code prefix} (the test's warm-up records) and prints {@code WARM <value>} once committed, and on the first
 * poll that brings records with {@code prefix} prints {@code ACQUIRED} and them as
 * {@code offset:value:deliveryCount}, then never polls nor acknowledges again.
 *
 * <p>Why a process of its own: a stock consumer that stops calling {@code poll} may still fetch once more in the
 * background (its last {@code poll} asks the network thread for more data, and that request can cross the response
 * that brought the records), and such a fetch acquires the records again as soon as their lock expires. Only a
 * stalled process never fetches again, as a member that hangs would.
 *
 * <p>{@link #main} takes the bootstrap servers, the group, the topic and the prefix; {@link #start} runs it in a child
 * JVM and the instance it returns reads what the member printed, pauses it and kills it.
 */
public final class StalledShareMember implements AutoCloseable {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private final Process process;
    private final Path dir;

    private StalledShareMember(Process process, Path dir) {
        this.process = process;
        this.dir = dir;
    }

    /** Starts the member in a child JVM on this JVM's classpath; {@link #close()} kills it. */
    static StalledShareMember start(String bootstrapServers, String group, String topic, String prefix)
            throws IOException {
        Path dir = TestDirectories.createTempDirectory("cairn-share-member-");
        Process process = new ProcessBuilder(JavaTool.javaExecutable(), "-cp", System.getProperty("java.class.path"),
                StalledShareMember.class.getName(), bootstrapServers, group, topic, prefix)
                .redirectOutput(dir.resolve("stdout").toFile())
                .redirectError(dir.resolve("stderr").toFile())
                .start();
        return new StalledShareMember(process, dir);
    }

    /** Waits until the member printed a line starting with {@code marker}, and returns that line. */
    String await(String marker, Duration timeout) throws IOException, InterruptedException {
        long until = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < until) {
            Optional<String> line = Files.readAllLines(dir.resolve("stdout"), StandardCharsets.UTF_8).stream()
                    .filter(l -> l.startsWith(marker)).findFirst();
            if (line.isPresent()) {
                return line.get();
            }
            if (!process.isAlive()) {
                break;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("the member (pid " + process.pid() + ") printed no " + marker + " line in "
                + timeout + "; it printed:\n" + output());
    }

    /** Waits for the {@code ACQUIRED} line and returns its records as {@code value -> delivery count}. */
    Map<String, Short> awaitAcquired() throws IOException, InterruptedException {
        Map<String, Short> acquired = new LinkedHashMap<>();
        for (String record : await("ACQUIRED ", TIMEOUT).substring("ACQUIRED ".length()).split(" ")) {
            String[] parts = record.split(":");
            acquired.put(parts[1], Short.valueOf(parts[2]));
        }
        return acquired;
    }

    /** SIGSTOP: the member's threads stop, its connections stay open and its group session runs on. */
    void pause() {
        Signals.send(process.pid(), "STOP");
    }

    String output() throws IOException {
        return Files.readString(dir.resolve("stdout"), StandardCharsets.UTF_8) + "--- stderr ---\n"
                + Files.readString(dir.resolve("stderr"), StandardCharsets.UTF_8);
    }

    /** SIGKILL by PID (a paused process too), then waits for it to be gone. */
    @Override
    public void close() {
        process.destroyForcibly();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("member pid " + process.pid() + " still runs 30 s after SIGKILL");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for member pid " + process.pid() + " to go", e);
        }
        TestDirectories.deleteRecursively(dir);
    }

    public static void main(String[] args) throws InterruptedException {
        String bootstrapServers = args[0];
        String group = args[1];
        String topic = args[2];
        String prefix = args[3];
        KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(Map.of(
            ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
            ConsumerConfig.GROUP_ID_CONFIG, group,
            ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit",
            ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
            ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class));
        consumer.subscribe(List.of(topic));
        while (true) {
            List<String> warm = new ArrayList<>();
            List<String> acquired = new ArrayList<>();
            for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(300))) {
                if (r.value().startsWith(prefix)) {
                    acquired.add(r.offset() + ":" + r.value() + ":" + r.deliveryCount().orElse((short) -1));
                } else {
                    consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                    warm.add(r.value());
                }
            }
            if (!warm.isEmpty()) {
                consumer.commitSync();
                warm.forEach(v -> System.out.println("WARM " + v));
            }
            if (!acquired.isEmpty()) {
                System.out.println("ACQUIRED " + String.join(" ", acquired));
                System.out.flush();
                // holds them, unacknowledged, until the test stops this process
                Thread.sleep(Long.MAX_VALUE);
            }
        }
    }
}
