package io.cairn.compat.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.cairn.testkit.ApiVersionsProbe;
import io.cairn.testkit.FreePorts;
import io.cairn.testkit.TestDirectories;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The Docker image's entry point {@code docker/launch}, run here without Docker: the image's paths are temporary
 * directories ({@code CAIRN_CONFIG_DIR}, {@code CAIRN_DATA_DIR}, {@code CAIRN_MOUNT_DIR}) and {@code CAIRN_HOME} is
 * the checkout, or, for the broker, the image's {@code /opt/cairn} as {@code docker/Dockerfile}'s runtime
 * {@code COPY} lines assemble it from the build (no sources, no Maven), started by its {@code ENTRYPOINT}. The
 * apache/kafka image's environment rules hold
 * ({@code KAFKA_*} mapping with {@code ___}, {@code __}, {@code _}, the JVM/log4j exclusions, precedence of a mounted
 * file, the baked default, derived listeners, CLUSTER_ID formatting that tolerates a formatted directory,
 * {@code KAFKA_LOG4J_ROOT_LOGLEVEL} and {@code KAFKA_LOG4J_LOGGERS}), a
 * compose-style environment starts a broker that stock clients produce to and consume from, and
 * {@code grafana/docker-compose.yml} parses and mounts only files that exist.
 */
@Timeout(180)
class DockerLaunchIT {

    private static final Path HOME = Paths.get(System.getProperty("cairn.home.dir", "..")).toAbsolutePath()
            .normalize();
    private static final Path LAUNCH = HOME.resolve("docker/launch");
    private static final String DEFAULT_CLUSTER_ID = "5L6g3nShT-eMCtK--X86sw";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);

    @Test
    void composeStyleEnvironmentRunsABrokerThatStockClientsUse() throws Exception {
        // Given: the variables of a typical single-node compose file, on free loopback ports
        Path work = TestDirectories.createTempDirectory("docker-launch");
        Path entryPoint = assembleImage(work.resolve("image"));
        int[] ports = FreePorts.freePorts(3);
        String host = FreePorts.LOOPBACK;
        Map<String, String> env = new LinkedHashMap<>(Map.of("CAIRN_DATA_DIR", work.resolve("data").toString(),
                "CAIRN_MOUNT_DIR", work.resolve("mnt").toString()));
        env.put("KAFKA_NODE_ID", "1");
        env.put("KAFKA_PROCESS_ROLES", "broker,controller");
        env.put("KAFKA_LISTENERS", "PLAINTEXT://" + host + ":" + ports[0] + ",CONTROLLER://" + host + ":" + ports[1]);
        env.put("KAFKA_ADVERTISED_LISTENERS", "PLAINTEXT://" + host + ":" + ports[0]);
        env.put("KAFKA_LISTENER_SECURITY_PROTOCOL_MAP", "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT");
        env.put("KAFKA_CONTROLLER_QUORUM_VOTERS", "1@" + host + ":" + ports[1]);
        env.put("KAFKA_CONTROLLER_LISTENER_NAMES", "CONTROLLER");
        env.put("KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR", "1");
        env.put("KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR", "1");
        env.put("KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS", "0");
        env.put("KAFKA_METRICS_HOST", host);
        env.put("KAFKA_METRICS_PORT", Integer.toString(ports[2]));
        env.put("KAFKA_HEAP_OPTS", "-Xmx384m");
        env.put("KAFKA_LOG4J_ROOT_LOGLEVEL", "info");
        env.put("KAFKA_LOG4J_LOGGERS", "io.cairn.broker.Main=WARN, kafka.request.logger=WARN");
        env.put("KAFKA_CAIRN_DOCKER___TEST__KEY", "mapped");
        String bootstrap = host + ":" + ports[0];

        // When: the image starts, is stopped, and starts again on the same volume
        for (int start = 1; start <= 2; start++) {
            Path log = work.resolve("launch-" + start + ".log");
            Process broker = start(entryPoint, env, log);
            try {
                // Then: it answers, formatted with the default CLUSTER_ID, and the stock clients work
                await().atMost(START_TIMEOUT).pollInterval(Duration.ofMillis(250)).until(() -> {
                    assertThat(broker.isAlive()).as("launch is running; output: %s", read(log)).isTrue();
                    return ApiVersionsProbe.answers(host, ports[0], Duration.ofSeconds(1));
                });
                assertThat(commandLine(broker)).contains("-Xmx384m");
                produceAndConsume(bootstrap, "docker-launch-" + start);
            } finally {
                stop(broker);
            }
        }

        // Then: the generated file follows the mapping rules and leaves out the JVM/log4j variables
        Map<String, String> props = properties(work.resolve("image/opt/cairn/config/server.properties"));
        assertThat(props).containsEntry("node.id", "1")
                .containsEntry("controller.quorum.voters", "1@" + host + ":" + ports[1])
                .containsEntry("offsets.topic.replication.factor", "1")
                .containsEntry("cairn.docker-test_key", "mapped")
                .containsEntry("log.dirs", work.resolve("data").toString());
        assertThat(props.keySet()).noneMatch(key -> key.contains("heap") || key.contains("log4j"));
        assertThat(read(work.resolve("data/meta.properties"))).contains("cluster.id=" + DEFAULT_CLUSTER_ID);
        assertThat(read(work.resolve("launch-2.log"))).contains("already formatted");
        // Then: the log4j variables set the levels (Main's INFO "started" line is gone, other INFO lines stay)
        assertThat(read(work.resolve("image/opt/cairn/config/log4j2-docker.xml")))
                .contains("<Logger name=\"io.cairn.broker.Main\" level=\"WARN\"/>", "<Root level=\"INFO\">");
        assertThat(read(work.resolve("launch-1.log"))).contains("Awaiting socket connections")
                .doesNotContain("Cairn broker started");
        TestDirectories.deleteRecursively(work);
    }

    @Test
    void mountedFileIsOverriddenByTheEnvironment() throws Exception {
        // Given
        Path work = TestDirectories.createTempDirectory("docker-launch-mounted");
        Files.createDirectories(work.resolve("mnt"));
        Files.writeString(work.resolve("mnt/server.properties"),
                "node.id=3\nnum.partitions = 4\n# node.id=9\nlog.dirs=/mounted\n", StandardCharsets.UTF_8);
        Map<String, String> env = new LinkedHashMap<>(paths(work));
        env.put("KAFKA_NODE_ID", "7");

        // When
        Map<String, String> props = configOnly(env, work);

        // Then: the file's keys stay unless a variable names them
        assertThat(props).containsEntry("node.id", "7").containsEntry("num.partitions", "4")
                .containsEntry("log.dirs", "/mounted").hasSize(3);
    }

    @Test
    void environmentAloneReplacesTheDefaultAndDerivesListeners() throws Exception {
        // Given
        Path work = TestDirectories.createTempDirectory("docker-launch-env");
        Map<String, String> env = new LinkedHashMap<>(paths(work));
        env.put("KAFKA_ADVERTISED_LISTENERS", "PLAINTEXT://broker:19092,HOST://localhost:9092");
        env.put("KAFKA_OPTS", "-Dsome.agent=true");
        env.put("KAFKA_JMX_OPTS", "-Dcom.sun.management.jmxremote=true");

        // When
        Map<String, String> props = configOnly(env, work);

        // Then
        assertThat(props).containsOnly(
                Map.entry("advertised.listeners", "PLAINTEXT://broker:19092,HOST://localhost:9092"),
                Map.entry("listeners", "PLAINTEXT://0.0.0.0:19092,HOST://0.0.0.0:9092"),
                Map.entry("log.dirs", work.resolve("data").toString()));
    }

    @Test
    void noInputUsesTheSingleNodeDefault() throws Exception {
        // Given
        Path work = TestDirectories.createTempDirectory("docker-launch-default");

        // When
        Map<String, String> props = configOnly(paths(work), work);

        // Then: Kafka's zero-configuration image, advertising localhost:9092
        assertThat(props).containsEntry("process.roles", "broker,controller")
                .containsEntry("advertised.listeners", "PLAINTEXT://localhost:9092")
                .containsEntry("controller.quorum.voters", "1@localhost:9093")
                .containsEntry("metrics.port", "9404")
                .containsEntry("log.dirs", work.resolve("data").toString());
    }

    @Test
    void controllerOnlyNodeRejectsAdvertisedListeners() throws Exception {
        // Given
        Path work = TestDirectories.createTempDirectory("docker-launch-controller");
        Map<String, String> env = new LinkedHashMap<>(paths(work));
        env.put("KAFKA_PROCESS_ROLES", "controller");
        env.put("KAFKA_ADVERTISED_LISTENERS", "PLAINTEXT://localhost:9092");
        env.put("CAIRN_LAUNCH_CONFIG_ONLY", "true");

        // When
        Process launch = start(LAUNCH, env, work.resolve("launch.log"));

        // Then
        assertThat(launch.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(launch.exitValue()).isEqualTo(1);
        assertThat(read(work.resolve("launch.log"))).contains("not supported on a KRaft controller");
        TestDirectories.deleteRecursively(work);
    }

    @Test
    void composeFileParsesAndMountsFilesThatExist() throws IOException {
        // Given
        Path grafana = HOME.resolve("grafana");
        JsonNode compose = new ObjectMapper(new YAMLFactory()).readTree(grafana.resolve("docker-compose.yml")
                .toFile());
        JsonNode services = compose.get("services");

        // Then: Cairn is built from docker/Dockerfile, every mounted file exists, the ports are Kafka's and the UIs'
        JsonNode build = services.get("cairn").get("build");
        assertThat(grafana.resolve(build.get("context").asText()).resolve(build.get("dockerfile").asText()))
                .isRegularFile();
        assertThat(LAUNCH).isExecutable();
        List<String> ports = new ArrayList<>();
        services.forEach(service -> {
            service.path("ports").forEach(port -> ports.add(port.asText()));
            service.path("volumes").forEach(volume -> {
                String source = volume.asText().split(":")[0];
                if (source.startsWith(".")) {
                    assertThat(grafana.resolve(source)).as(volume.asText()).exists();
                }
            });
        });
        assertThat(ports).contains("9092:9092", "9090:9090", "3000:3000");

        // Then: Prometheus scrapes the cairn service's metrics port, Grafana reads that Prometheus and the dashboard
        JsonNode prometheus = yaml(grafana.resolve("compose/prometheus.yml"));
        assertThat(prometheus.at("/scrape_configs/0/static_configs/0/targets/0").asText()).isEqualTo("cairn:9404");
        assertThat(services.at("/cairn/environment/KAFKA_METRICS_PORT").asText()).isEqualTo("9404");
        assertThat(yaml(grafana.resolve("compose/datasource.yml")).at("/datasources/0/url").asText())
                .isEqualTo("http://prometheus:9090");
        String dashboards = yaml(grafana.resolve("provisioning/dashboards/cairn.yml"))
                .at("/providers/0/options/path").asText();
        assertThat(services.get("grafana").get("volumes").toString()).contains("./dashboards:" + dashboards);
    }

    private static Map<String, String> paths(Path work) {
        return Map.of("CAIRN_HOME", HOME.toString(), "CAIRN_CONFIG_DIR", work.resolve("config").toString(),
                "CAIRN_DATA_DIR", work.resolve("data").toString(), "CAIRN_MOUNT_DIR", work.resolve("mnt").toString());
    }

    /** Runs launch with {@code CAIRN_LAUNCH_CONFIG_ONLY=true}; the server.properties it wrote. */
    private static Map<String, String> configOnly(Map<String, String> env, Path work) throws Exception {
        Map<String, String> withFlag = new LinkedHashMap<>(env);
        withFlag.put("CAIRN_LAUNCH_CONFIG_ONLY", "true");
        Process launch = start(LAUNCH, withFlag, work.resolve("launch.log"));
        assertThat(launch.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(launch.exitValue()).as(read(work.resolve("launch.log"))).isZero();
        Map<String, String> props = properties(work.resolve("config/server.properties"));
        TestDirectories.deleteRecursively(work);
        return props;
    }

    /**
     * The image's files under {@code root} as the {@code COPY} lines of the Dockerfile's runtime stage place them,
     * their sources taken from the checkout (the build stage's {@code /src}); the {@code ENTRYPOINT} under root.
     */
    private static Path assembleImage(Path root) throws IOException {
        List<String> lines = Files.readAllLines(HOME.resolve("docker/Dockerfile"), StandardCharsets.UTF_8);
        int runtime = 0;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith("FROM ")) {
                runtime = i;
            }
        }
        Path entryPoint = null;
        for (String line : lines.subList(runtime, lines.size())) {
            if (line.startsWith("COPY ")) {
                String[] words = line.replace("--from=build ", "").split("\\s+");
                Path target = root.resolve(words[words.length - 1].substring(1));
                for (int i = 1; i < words.length - 1; i++) {
                    copy(words[i].replaceFirst("^/src/", ""), target);
                }
            } else if (line.startsWith("ENTRYPOINT ")) {
                entryPoint = root.resolve(line.replaceAll("^ENTRYPOINT \\[\"/(.*)\"\\]$", "$1"));
            }
        }
        assertThat(entryPoint).as("the Dockerfile's ENTRYPOINT").isNotNull().isExecutable();
        return entryPoint;
    }

    /** One source of a COPY (a file, a directory's contents, or a file name glob) into the directory target. */
    private static void copy(String source, Path target) throws IOException {
        Path from = HOME.resolve(source);
        Files.createDirectories(target);
        if (Files.isDirectory(from)) {
            try (Stream<Path> tree = Files.walk(from)) {
                for (Path path : (Iterable<Path>) tree::iterator) {
                    Path to = target.resolve(from.relativize(path).toString());
                    if (Files.isDirectory(path)) {
                        Files.createDirectories(to);
                    } else {
                        Files.copy(path, to, StandardCopyOption.COPY_ATTRIBUTES);
                    }
                }
            }
            return;
        }
        PathMatcher glob = FileSystems.getDefault().getPathMatcher("glob:" + from.getFileName());
        int copied = 0;
        try (Stream<Path> files = Files.list(from.getParent())) {
            for (Path file : (Iterable<Path>) files.filter(f -> glob.matches(f.getFileName()))::iterator) {
                Files.copy(file, target.resolve(file.getFileName().toString()), StandardCopyOption.COPY_ATTRIBUTES);
                copied++;
            }
        }
        assertThat(copied).as("files matching COPY source %s", source).isPositive();
    }

    /** Starts a launch script with exactly these KAFKA_* variables (none inherited) and its output in {@code log}. */
    private static Process start(Path script, Map<String, String> env, Path log) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(script.toString()).redirectErrorStream(true)
                .redirectOutput(log.toFile());
        builder.environment().keySet().removeIf(key -> key.startsWith("KAFKA_") || key.startsWith("CAIRN_")
                || key.equals("CLUSTER_ID"));
        builder.environment().putAll(env);
        return builder.start();
    }

    /** SIGTERM to the broker JVM (launch execs it, so it is the process started), SIGKILL if it lingers. */
    private static void stop(Process broker) throws InterruptedException {
        broker.destroy();
        if (!broker.waitFor(30, TimeUnit.SECONDS)) {
            broker.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static String commandLine(Process process) throws IOException {
        return read(Paths.get("/proc/" + process.pid() + "/cmdline")).replace('\0', ' ');
    }

    private static void produceAndConsume(String bootstrap, String topic) throws Exception {
        Properties producerProps = new Properties();
        producerProps.put("bootstrap.servers", bootstrap);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps, new StringSerializer(),
                new StringSerializer())) {
            producer.send(new ProducerRecord<>(topic, "key", "from-docker-launch")).get(30, TimeUnit.SECONDS);
        }
        Properties consumerProps = new Properties();
        consumerProps.put("bootstrap.servers", bootstrap);
        consumerProps.put("group.id", topic + "-group");
        consumerProps.put("auto.offset.reset", "earliest");
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps, new StringDeserializer(),
                new StringDeserializer())) {
            consumer.subscribe(List.of(topic));
            await().atMost(Duration.ofSeconds(60)).until(() -> {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    values.add(record.value());
                }
                return !values.isEmpty();
            });
        }
        assertThat(values).containsExactly("from-docker-launch");
    }

    private static Map<String, String> properties(Path file) throws IOException {
        Properties props = new Properties();
        try (var reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            props.load(reader);
        }
        Map<String, String> map = new LinkedHashMap<>();
        props.stringPropertyNames().forEach(key -> map.put(key, props.getProperty(key)));
        return map;
    }

    private static JsonNode yaml(Path file) throws IOException {
        return new ObjectMapper(new YAMLFactory()).readTree(file.toFile());
    }

    private static String read(Path file) throws IOException {
        return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
    }
}
