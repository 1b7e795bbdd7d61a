package io.cairn.compat.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.compat.harness.KafkaHalfInFaults;
import io.cairn.testkit.ApiVersionsProbe;
import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.CairnProcess;
import io.cairn.testkit.FreePorts;
import io.cairn.testkit.JavaTool;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Kafka's own KRaft configuration starts Cairn unchanged: the sample single-node {@code server.properties} of Kafka
 * 4.1 (a CONTROLLER listener in {@code listeners}, {@code controller.quorum.bootstrap.servers}), formatted with
 * {@code cairn-storage format --standalone} as Kafka's quickstart formats it, and a three-node cluster of combined
 * nodes as Kafka's KRaft documentation writes it, with a static {@code controller.quorum.voters} (against Cairn and
 * the reference Kafka, through testkit's {@link BrokerCluster}) or with {@code controller.quorum.bootstrap.servers}
 * and {@code format --initial-controllers}, three nodes on one host with no key of Cairn's own (the {@code /metrics}
 * endpoint's default port is taken by the first, and the others start without it). The controller listener is
 * where the Raft quorum is reached; clients use the PLAINTEXT listeners with the stock Java clients.
 */
@Timeout(300)
@ExtendWith(BrokerLogsExtension.class)
class KraftConfigIT {

    private static final String SAMPLE = "/kafka-4.1.1/server.properties";
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @Test
    void kafkasSampleServerPropertiesStartsCairnFormattedStandalone() throws Exception {
        // Given: Kafka's file with only log.dirs changed, and its fixed ports free
        String sample = resource(SAMPLE);
        String config = sample.replaceAll("(?m)^log\\.dirs=.*$",
                Matcher.quoteReplacement("log.dirs=" + CairnProcess.DATA_DIR_PLACEHOLDER));
        assertThat(changedLines(sample, config)).containsExactly("log.dirs=" + CairnProcess.DATA_DIR_PLACEHOLDER);
        assertThat(portFree(9092) && portFree(9093)).as("ports 9092 and 9093 of Kafka's sample file are free")
                .isTrue();
        try (CairnProcess cairn = CairnProcess.builder().serverProperties(config, 9092).build()) {
            String clusterId = cairn.storageTool("random-uuid").stdout().strip();
            JavaTool.Result format = cairn.storageTool("format", "--standalone", "-t", clusterId, "-c",
                    CairnProcess.CONFIG_PLACEHOLDER);
            assertThat(format.exitCode()).as("%s", format).isZero();

            // When
            cairn.start();

            // Then: the stock clients work on :9092, and :9093 is the quorum's, not a Kafka listener
            try (Admin admin = admin("localhost:9092")) {
                DescribeClusterResult cluster = admin.describeCluster();
                assertThat(cluster.clusterId().get(30, TimeUnit.SECONDS)).isEqualTo(clusterId);
                assertThat(cluster.nodes().get(30, TimeUnit.SECONDS)).extracting(Node::id, Node::port)
                        .containsExactly(org.assertj.core.api.Assertions.tuple(1, 9092));
                assertThat(cluster.controller().get(30, TimeUnit.SECONDS).id()).isEqualTo(1);
            }
            assertThat(produceAndConsume("localhost:9092", 1, 10)).hasSize(10);
            assertThat(ApiVersionsProbe.answers("localhost", 9093, Duration.ofSeconds(2))).isFalse();
            assertThat(cairn.logLinesContaining("the controller listener :9093 serves the Raft quorum")).isNotEmpty();
            assertThat(cairn.logLinesContaining("Address already in use")).isEmpty();
        }
    }

    @KafkaHalfInFaults
    void threeCombinedNodesWithStaticVotersFormAQuorumAndServeClients(BrokerKind kind) throws Exception {
        // Given: Kafka's documented static quorum (controller.quorum.voters), each node formatted with one cluster id
        try (BrokerCluster cluster = BrokerCluster.create(kind, 3, Map.of())) {
            // When
            cluster.start();

            // Then
            assertServes(cluster.bootstrapServers(), cluster.clusterId());
        }
    }

    @Test
    void threeCombinedNodesWithBootstrapServersFormattedWithInitialControllersFormAQuorumAndServeClients()
            throws Exception {
        // Given: controller.quorum.bootstrap.servers, formatted with --initial-controllers (KIP-853), as Kafka's
        // documentation sets up a dynamic quorum
        int[] ports = FreePorts.freePorts(6);
        List<CairnProcess> nodes = new ArrayList<>();
        try {
            String bootstrap = String.join(",", IntStream.rangeClosed(1, 3)
                    .mapToObj(id -> "localhost:" + ports[2 + id]).toList());
            for (int id = 1; id <= 3; id++) {
                int client = ports[id - 1];
                int controller = ports[2 + id];
                String config = String.join("\n",
                        "process.roles=broker,controller",
                        "node.id=" + id,
                        "controller.quorum.bootstrap.servers=" + bootstrap,
                        "listeners=PLAINTEXT://localhost:" + client + ",CONTROLLER://localhost:" + controller,
                        "advertised.listeners=PLAINTEXT://localhost:" + client + ",CONTROLLER://localhost:"
                                + controller,
                        "inter.broker.listener.name=PLAINTEXT",
                        "controller.listener.names=CONTROLLER",
                        "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
                        "log.dirs=" + CairnProcess.DATA_DIR_PLACEHOLDER,
                        "offsets.topic.replication.factor=1",
                        "transaction.state.log.replication.factor=1", "");
                nodes.add(CairnProcess.builder().serverProperties(config, client).build());
            }
            String clusterId = nodes.get(0).storageTool("random-uuid").stdout().strip();
            List<String> initial = new ArrayList<>();
            for (int id = 1; id <= 3; id++) {
                String directoryId = nodes.get(0).storageTool("random-uuid").stdout().strip();
                initial.add(id + "@localhost:" + ports[2 + id] + ":" + directoryId);
            }
            for (CairnProcess node : nodes) {
                JavaTool.Result format = node.storageTool("format", "--cluster-id", clusterId, "--config",
                        CairnProcess.CONFIG_PLACEHOLDER, "--initial-controllers", String.join(",", initial));
                assertThat(format.exitCode()).as("%s", format).isZero();
            }

            // When: the three start together (each waits for the quorum before it serves)
            allOf(nodes.stream().map(node -> CompletableFuture.runAsync(node::start)).toList());

            // Then
            assertServes("localhost:" + ports[0] + ",localhost:" + ports[1], clusterId);
            for (CairnProcess node : nodes) {
                assertThat(node.logLinesContaining("serves the Raft quorum")).isNotEmpty();
            }
            // Kafka's files name no metrics.port, an endpoint Kafka does not have: at most one node serves /metrics
            // on the default 9404, and each of the others says so in one WARN line and serves everything else.
            List<Integer> warnings = nodes.stream().map(node -> node.logLinesContaining(
                    "serving without /metrics. Set metrics.port").size()).toList();
            assertThat(warnings).as("WARN lines per node").allMatch(count -> count <= 1);
            assertThat(warnings.stream().mapToInt(Integer::intValue).sum()).isGreaterThanOrEqualTo(2);
        } finally {
            // Stopped together: a node stopped alone would wait for a quorum the others no longer form.
            allOf(nodes.stream().map(node -> CompletableFuture.runAsync(node::close)).toList());
        }
    }

    /** The cluster lists its three brokers and a controller, and a topic spread over them carries records. */
    private static void assertServes(String bootstrapServers, String clusterId) throws Exception {
        try (Admin admin = admin(bootstrapServers)) {
            DescribeClusterResult cluster = admin.describeCluster();
            assertThat(cluster.clusterId().get(30, TimeUnit.SECONDS)).isEqualTo(clusterId);
            assertThat(cluster.nodes().get(30, TimeUnit.SECONDS)).extracting(Node::id)
                    .containsExactlyInAnyOrder(1, 2, 3);
            assertThat(cluster.controller().get(30, TimeUnit.SECONDS).id()).isBetween(1, 3);
            admin.createTopics(List.of(new NewTopic("spread", 3, (short) 1))).all().get(30, TimeUnit.SECONDS);
            // Each broker learns the topic when it has applied the committed record, as in Kafka.
            await().atMost(TIMEOUT).ignoreExceptions().untilAsserted(() -> assertThat(admin.describeTopics(
                    List.of("spread")).allTopicNames().get(30, TimeUnit.SECONDS).get("spread").partitions())
                    .extracting(partition -> partition.leader().id()).hasSize(3));
        }
        List<ConsumerRecord<String, String>> records = produceAndConsume(bootstrapServers, 3, 30);
        assertThat(records).extracting(ConsumerRecord::value)
                .containsExactlyInAnyOrderElementsOf(IntStream.range(0, 30).mapToObj(i -> "v" + i).toList());
    }

    private static void allOf(Collection<CompletableFuture<Void>> futures) {
        CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).join();
    }

    /**
     * Creates the topic {@code spread} (when {@code partitions} is 1: auto-created {@code sample}), sends
     * {@code count} records round-robin over its partitions with a default producer (acks=all, idempotent) and reads
     * them back from the beginning with an assigned consumer.
     */
    private static List<ConsumerRecord<String, String>> produceAndConsume(String bootstrap, int partitions,
                                                                         int count) throws Exception {
        String topic = partitions == 1 ? "sample" : "spread";
        Map<String, Object> producerProps = new HashMap<>();
        producerProps.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        producerProps.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 60_000);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps, new StringSerializer(),
                new StringSerializer())) {
            List<java.util.concurrent.Future<?>> sends = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                sends.add(producer.send(new ProducerRecord<>(topic, i % partitions, "k" + i, "v" + i)));
            }
            for (java.util.concurrent.Future<?> send : sends) {
                send.get(60, TimeUnit.SECONDS);
            }
        }
        Properties consumerProps = new Properties();
        consumerProps.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        consumerProps.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<ConsumerRecord<String, String>> records = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps, new StringDeserializer(),
                new StringDeserializer())) {
            consumer.assign(IntStream.range(0, partitions).mapToObj(p -> new TopicPartition(topic, p)).toList());
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (records.size() < count && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
            }
        }
        return records;
    }

    private static Admin admin(String bootstrap) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 60_000);
        return Admin.create(props);
    }

    private static String resource(String name) throws IOException {
        try (InputStream in = KraftConfigIT.class.getResourceAsStream(name)) {
            assertThat(in).as("test resource %s", name).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static List<String> changedLines(String before, String after) {
        List<String> was = before.lines().toList();
        List<String> now = after.lines().toList();
        assertThat(now).hasSameSizeAs(was);
        return IntStream.range(0, now.size()).filter(i -> !now.get(i).equals(was.get(i))).mapToObj(now::get).toList();
    }

    private static boolean portFree(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress(port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
