package io.cairn.compat.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.CairnProcess;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.KafkaDistribution;
import io.cairn.testkit.KafkaReferenceProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The stock {@code kafka-configs --describe --all} of a topic and of broker 1, on the reference Kafka 4.1.1 and on
 * Cairn started with the same settings, compared line by line: every line must be Kafka's, except the keys of
 * {@link #KNOWN_DIFFERENCES}, each with its reason. Addresses and directories are masked first, since the two
 * processes listen on different ports and write to different directories. The differing lines are printed. What the
 * tool does not print (type, read-only, sensitive, documentation present) is compared through the Admin API.
 */
@Timeout(300)
@ExtendWith(BrokerLogsExtension.class)
class DescribeAllConfigsIT {

    private static final long TIMEOUT_S = 30;
    private static final String TOPIC = "describe-all";

    /** Settings the reference Kafka starts with that CairnProcess does not set by itself. */
    private static final Map<String, String> SHARED = Map.of("num.partitions", "1",
            "share.coordinator.state.topic.replication.factor", "1", "share.coordinator.state.topic.min.isr", "1",
            "inter.broker.listener.name", "PLAINTEXT");

    /** Keys whose lines differ, and why. */
    private static final Map<String, String> KNOWN_DIFFERENCES = new TreeMap<>(Map.ofEntries(
            // The topology: the reference Kafka is a combined KRaft node with a CONTROLLER listener and static voters;
            // CairnProcess runs Cairn's metadata quorum on its own port (metadata.* keys, not a listener).
            Map.entry("controller.listener.names", "topology: Kafka's node has a CONTROLLER listener"),
            Map.entry("controller.quorum.voters", "topology: Kafka's voters are static, Cairn's are formatted"),
            Map.entry("listener.security.protocol.map", "topology: Kafka's test node maps its CONTROLLER listener"),
            Map.entry("listeners", "topology: Kafka's node also listens on its CONTROLLER listener"),
            Map.entry("process.roles", "topology: set explicitly for Kafka (Cairn's default is the same value)"),
            // Cairn's own default: its log directory is ./data when neither log.dirs nor log.dir is set.
            Map.entry("log.dir", "Cairn's default is ./data, Kafka's /tmp/kafka-logs (both unused: log.dirs is set)"),
            // Cairn's own keys, which Kafka does not have.
            Map.entry("metrics.enabled", "Cairn's own key (the Prometheus endpoint)"),
            Map.entry("metrics.host", "Cairn's own key (the Prometheus endpoint)"),
            Map.entry("metrics.port", "Cairn's own key (the Prometheus endpoint), set by CairnProcess"),
            Map.entry("metadata.listener.host", "Cairn's own key (a broker-only node's metadata listener)"),
            Map.entry("metadata.listener.port", "Cairn's own key (a broker-only node's metadata listener)"),
            Map.entry("metadata.snapshot.entries", "Cairn's own key (metadata snapshots by entries)")));

    @Test
    void describeAllIsKafkasLineForLine() throws Exception {
        try (BrokerProcess kafka = start(KafkaReferenceProcess.builder()); BrokerProcess cairn = start(cairnBuilder())) {
            // Given
            createTopic(kafka);
            createTopic(cairn);

            // When
            List<String> kafkaTopic = describe(kafka, "topics", TOPIC);
            List<String> cairnTopic = describe(cairn, "topics", TOPIC);
            List<String> kafkaBroker = describe(kafka, "brokers", "1");
            List<String> cairnBroker = describe(cairn, "brokers", "1");

            // Then
            assertThat(kafkaTopic).as("Kafka's output").isNotEmpty();
            List<String> topicLines = unexpected(kafkaTopic, cairnTopic, "topic");
            List<String> brokerLines = unexpected(kafkaBroker, cairnBroker, "broker");
            assertThat(topicLines).as("topic lines that differ").isEmpty();
            assertThat(brokerLines).as("broker lines that differ").isEmpty();
            for (ConfigResource resource : List.of(new ConfigResource(ConfigResource.Type.TOPIC, TOPIC),
                    new ConfigResource(ConfigResource.Type.BROKER, "1"))) {
                Map<String, String> kafkaFlags = flags(kafka, resource);
                Map<String, String> cairnFlags = flags(cairn, resource);
                KNOWN_DIFFERENCES.keySet().forEach(key -> {
                    kafkaFlags.remove(key);
                    cairnFlags.remove(key);
                });
                assertThat(cairnFlags).as("type, read-only, sensitive of %s", resource).isEqualTo(kafkaFlags);
            }
        }
    }

    private static CairnProcess.Builder cairnBuilder() {
        CairnProcess.Builder builder = CairnProcess.builder();
        SHARED.forEach(builder::config);
        return builder;
    }

    private static BrokerProcess start(KafkaReferenceProcess.Builder builder) {
        SHARED.forEach(builder::config);
        return started(builder.build());
    }

    private static BrokerProcess start(CairnProcess.Builder builder) {
        return started(builder.build());
    }

    private static BrokerProcess started(BrokerProcess broker) {
        try {
            broker.start();
            return broker;
        } catch (RuntimeException e) {
            broker.close();
            throw e;
        }
    }

    private static void createTopic(BrokerProcess broker) throws Exception {
        try (Admin admin = AdminTopicsIT.admin(broker)) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get(TIMEOUT_S, TimeUnit.SECONDS);
        }
    }

    /**
     * What the tool does not print, from Admin.describeConfigs with documentation: each key's type, read-only and
     * sensitive flags, and whether it has documentation.
     */
    private static Map<String, String> flags(BrokerProcess broker, ConfigResource resource) throws Exception {
        try (Admin admin = AdminTopicsIT.admin(broker)) {
            Config config = admin.describeConfigs(List.of(resource), new DescribeConfigsOptions()
                    .includeDocumentation(true)).all().get(TIMEOUT_S, TimeUnit.SECONDS).get(resource);
            Map<String, String> flags = new TreeMap<>();
            for (ConfigEntry entry : config.entries()) {
                flags.put(entry.name(), entry.type() + " readOnly=" + entry.isReadOnly() + " sensitive="
                        + entry.isSensitive() + " documented=" + (entry.documentation() != null));
            }
            return flags;
        }
    }

    /** The tool's output lines with this process's address, ports and directory masked. */
    private static List<String> describe(BrokerProcess broker, String type, String name) {
        JavaTool.Result result = KafkaDistribution.tool("kafka.admin.ConfigCommand").args(List.of("--bootstrap-server",
                broker.bootstrapServers(), "--describe", "--all", "--entity-type", type, "--entity-name", name))
                .timeout(Duration.ofSeconds(90)).build().run();
        assertThat(result.exitCode()).as("%s", result).isZero();
        String dir = broker instanceof CairnProcess c ? c.dataDir().toString()
                : ((KafkaReferenceProcess) broker).dataDir().toString();
        int port = broker instanceof CairnProcess c ? c.port() : ((KafkaReferenceProcess) broker).port();
        List<String> lines = new ArrayList<>();
        for (String line : result.stdout().lines().toList()) {
            String masked = line.replace(dir, "<dir>").replace(":" + port, ":<port>");
            if (broker instanceof KafkaReferenceProcess kafka) {
                masked = masked.replace(":" + kafka.controllerPort(), ":<controller-port>");
            }
            lines.add(masked);
        }
        return lines;
    }

    /** The lines of {@code cairn} not in {@code kafka} and the reverse, except those of the known differences. */
    private static List<String> unexpected(List<String> kafka, List<String> cairn, String what) {
        List<String> differing = new ArrayList<>();
        kafka.stream().filter(line -> !cairn.contains(line)).forEach(line -> differing.add("kafka: " + line));
        cairn.stream().filter(line -> !kafka.contains(line)).forEach(line -> differing.add("cairn: " + line));
        differing.forEach(line -> System.out.println("[describe --all " + what + "] " + line));
        return differing.stream().filter(line -> !KNOWN_DIFFERENCES.containsKey(key(line))).toList();
    }

    /** The key of an entry line ({@code "  key=value sensitive=..."}) after its "kafka: " or "cairn: " prefix. */
    private static String key(String line) {
        String entry = line.substring(line.indexOf(':') + 1).trim();
        int equals = entry.indexOf('=');
        return equals < 0 ? entry : entry.substring(0, equals);
    }
}
