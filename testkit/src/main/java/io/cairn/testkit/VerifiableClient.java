package io.cairn.testkit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Kafka's system-test clients as kafkatest runs them: {@code org.apache.kafka.tools.VerifiableProducer} (produces
 * the increasing integers {@code "0"}, {@code "1"}, ... and prints each acknowledgement) and
 * {@code org.apache.kafka.tools.VerifiableConsumer} (a group member that prints every record with {@code --verbose}),
 * each in its own JVM with Kafka's classpath, running in the background while a scenario bounces brokers. Their
 * JSON event lines are collected as they come; {@link #events} gives them parsed. Stopped by PID (SIGTERM, so the
 * tool's shutdown hook flushes and closes), never by name. Thread-safe.
 */
public final class VerifiableClient implements AutoCloseable {

    private static final Logger LOGGER = LogManager.getLogger(VerifiableClient.class);
    private static final String PRODUCER = "org.apache.kafka.tools.VerifiableProducer";
    private static final String CONSUMER = "org.apache.kafka.tools.VerifiableConsumer";
    /** A flat JSON field of the tools' events: a string, a number, a boolean or null. */
    private static final Pattern FIELD = Pattern.compile("\"([a-z_]+)\":(\"((?:[^\"\\\\]|\\\\.)*)\"|[-0-9.eE]+|true"
            + "|false|null)");

    private final String name;
    private final Process process;
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final List<String> errors = new CopyOnWriteArrayList<>();
    private final Thread stdout;
    private final Thread stderr;

    private VerifiableClient(String name, List<String> command) {
        this.name = name;
        try {
            this.process = new ProcessBuilder(command).start();
        } catch (IOException e) {
            throw new UncheckedIOException("Could not start " + name, e);
        }
        this.stdout = collect(process.getInputStream(), lines, name + "-stdout");
        this.stderr = collect(process.getErrorStream(), errors, name + "-stderr");
        LOGGER.info("{} started as pid {}: {}", name, process.pid(), command.subList(command.size() - 8,
                command.size()));
    }

    /**
     * Starts a VerifiableProducer that sends {@code maxMessages} records (-1: until stopped) at about
     * {@code throughput} records/s to {@code topic} with {@code config} as its producer config (for example
     * {@code acks=all}, {@code enable.idempotence=true} and {@code retries}, as kafkatest passes them).
     */
    public static VerifiableClient producer(String bootstrapServers, String topic, int maxMessages, int throughput,
                                            Map<String, String> config) {
        Path file = configFile("verifiable-producer", config);
        List<String> args = new ArrayList<>(List.of("--bootstrap-server", bootstrapServers, "--topic", topic,
                "--max-messages", Integer.toString(maxMessages), "--throughput", Integer.toString(throughput),
                "--acks", config.getOrDefault("acks", "-1").equals("all") ? "-1" : config.getOrDefault("acks", "-1"),
                "--producer.config", file.toString()));
        return new VerifiableClient("verifiable-producer", command(PRODUCER, args));
    }

    /**
     * Starts a VerifiableConsumer in {@code group} on {@code topic} that prints every record ({@code --verbose}) and
     * commits after each poll (no auto-commit), with {@code config} as its consumer config.
     */
    public static VerifiableClient consumer(String bootstrapServers, String topic, String group,
                                            Map<String, String> config) {
        Path file = configFile("verifiable-consumer", config);
        List<String> args = new ArrayList<>(List.of("--bootstrap-server", bootstrapServers, "--topic", topic,
                "--group-id", group, "--reset-policy", "earliest", "--verbose", "--session-timeout", "10000",
                "--consumer.config", file.toString()));
        return new VerifiableClient("verifiable-consumer", command(CONSUMER, args));
    }

    /** The parsed events named {@code eventName} so far ({@code producer_send_success}, {@code record_data}, ...). */
    public List<Map<String, String>> events(String eventName) {
        List<Map<String, String>> events = new ArrayList<>();
        for (String line : lines) {
            if (line.startsWith("{") && line.contains("\"name\":\"" + eventName + "\"")) {
                events.add(parse(line));
            }
        }
        return events;
    }

    /** Every line the tool wrote to stdout so far. */
    public List<String> stdout() {
        return List.copyOf(lines);
    }

    /** Every line the tool wrote to stderr so far. */
    public List<String> stderr() {
        return List.copyOf(errors);
    }

    public boolean isRunning() {
        return process.isAlive();
    }

    /** Waits for the tool to end by itself (a producer with a message limit); false when it is still running. */
    public boolean awaitExit(Duration timeout) throws InterruptedException {
        boolean exited = process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        if (exited) {
            joinReaders();
        }
        return exited;
    }

    /** Sends SIGTERM (the tool flushes and closes in its shutdown hook) and waits; SIGKILL after 30 s. */
    @Override
    public void close() {
        if (process.isAlive()) {
            // SIGTERM through the handle: Process.destroy would also close the pipes, losing the last lines the
            // tool's shutdown hook prints.
            process.toHandle().destroy();
            try {
                if (!process.waitFor(30, TimeUnit.SECONDS)) {
                    LOGGER.warn("{} (pid {}) still running 30 s after SIGTERM; killing it", name, process.pid());
                    process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
        joinReaders();
    }

    /** One flat JSON object of the tools' output as field name to value (strings unquoted, null as null). */
    static Map<String, String> parse(String line) {
        Map<String, String> fields = new LinkedHashMap<>();
        Matcher matcher = FIELD.matcher(line);
        while (matcher.find()) {
            String value = matcher.group(3) != null ? matcher.group(3) : matcher.group(2);
            fields.put(matcher.group(1), "null".equals(value) && matcher.group(3) == null ? null : value);
        }
        return fields;
    }

    private void joinReaders() {
        try {
            stdout.join(TimeUnit.SECONDS.toMillis(10));
            stderr.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static List<String> command(String mainClass, List<String> args) {
        List<String> command = new ArrayList<>();
        command.add(JavaTool.javaExecutable());
        command.addAll(KafkaDistribution.toolJvmArgs());
        command.addAll(List.of("-cp", KafkaDistribution.classpath(), mainClass));
        command.addAll(args);
        return command;
    }

    private static Path configFile(String prefix, Map<String, String> config) {
        try {
            Path file = Files.createTempFile(prefix + "-", ".properties");
            file.toFile().deleteOnExit();
            StringBuilder text = new StringBuilder();
            config.forEach((key, value) -> text.append(key).append('=').append(value).append('\n'));
            Files.writeString(file, text, StandardCharsets.UTF_8);
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException("Could not write the config of " + prefix, e);
        }
    }

    private static Thread collect(java.io.InputStream in, List<String> into, String threadName) {
        Thread thread = new Thread(() -> {
            try (BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null) {
                    into.add(line);
                }
            } catch (IOException e) {
                into.add("(reading " + threadName + " failed: " + e + ")");
            }
        }, threadName);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }
}
