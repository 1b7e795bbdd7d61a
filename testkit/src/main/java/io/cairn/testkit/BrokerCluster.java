package io.cairn.testkit;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * A KRaft cluster of {@code size} real broker processes of one {@link BrokerKind}, laid out as Kafka's documentation
 * writes one: every node combined ({@code process.roles=broker,controller}), a static
 * {@code controller.quorum.voters} over the CONTROLLER listeners, a PLAINTEXT listener for clients, each node's
 * storage formatted with one cluster id before its first start (Cairn's {@code cairn-storage format}, Kafka's
 * {@code kafka-storage format}). The same scenario runs against Cairn and the reference Kafka.
 *
 * <p>Nodes start and stop together (a node alone waits for a quorum the others would form); single nodes can be
 * stopped, killed and started again through {@link #node}. Not thread-safe.
 */
public final class BrokerCluster implements AutoCloseable {

    /** The settings both kinds' nodes get unless the scenario overrides them: what a small test cluster needs. */
    private static final Map<String, String> DEFAULTS = defaults();

    private final BrokerKind kind;
    private final List<BrokerProcess> nodes;
    private final String clusterId;

    private BrokerCluster(BrokerKind kind, List<BrokerProcess> nodes, String clusterId) {
        this.kind = kind;
        this.nodes = List.copyOf(nodes);
        this.clusterId = clusterId;
    }

    /**
     * A cluster of {@code size} nodes of {@code kind} with ids {@code 1..size}, not yet started; {@code config} is
     * added to (and overrides) every node's {@code server.properties}.
     */
    public static BrokerCluster create(BrokerKind kind, int size, Map<String, String> config) {
        int[] ports = FreePorts.freePorts(2 * size);
        String host = FreePorts.LOOPBACK;
        StringBuilder voters = new StringBuilder();
        for (int i = 0; i < size; i++) {
            voters.append(i == 0 ? "" : ",").append(i + 1).append('@').append(host).append(':')
                    .append(ports[size + i]);
        }
        String clusterId = KafkaReferenceProcess.randomClusterId();
        Map<String, String> settings = new LinkedHashMap<>(DEFAULTS);
        settings.putAll(config);
        List<BrokerProcess> nodes = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            ClusterNode node = new ClusterNode(i + 1, ports[i], ports[size + i], voters.toString(), clusterId);
            nodes.add(switch (kind) {
                case CAIRN -> {
                    // Each node's metrics endpoint on a port of its own (the default 9404 would be shared).
                    String text = node.serverProperties(host, CairnProcess.DATA_DIR_PLACEHOLDER)
                            + (settings.containsKey("metrics.port") ? "" : "metrics.port=0\n")
                            + settings.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue() + "\n")
                                    .collect(Collectors.joining());
                    yield CairnProcess.builder().serverProperties(text, node.clientPort()).build();
                }
                case KAFKA -> {
                    KafkaReferenceProcess.Builder builder = KafkaReferenceProcess.builder().clusterNode(node);
                    settings.forEach(builder::config);
                    yield builder.build();
                }
            });
        }
        return new BrokerCluster(kind, nodes, clusterId);
    }

    public BrokerKind kind() {
        return kind;
    }

    /** The nodes, node id {@code i} at index {@code i - 1}. */
    public List<BrokerProcess> nodes() {
        return nodes;
    }

    /** The node with {@code nodeId} (1-based). */
    public BrokerProcess node(int nodeId) {
        return nodes.get(nodeId - 1);
    }

    /** Every node's client listener, for {@code bootstrap.servers}. */
    public String bootstrapServers() {
        return nodes.stream().map(BrokerProcess::bootstrapServers).collect(Collectors.joining(","));
    }

    /** Formats (first start only) and starts every node together; returns once each serves clients. */
    public void start() {
        all(this::startNode);
    }

    /** Starts one node again (formatting its storage first if it never was). */
    public void startNode(BrokerProcess node) {
        if (node instanceof CairnProcess cairn && !Files.exists(cairn.dataDir().resolve("meta.properties"))) {
            JavaTool.Result format = cairn.storageTool("format", "--cluster-id", clusterId, "--config",
                    CairnProcess.CONFIG_PLACEHOLDER);
            if (format.exitCode() != 0) {
                throw new IllegalStateException("cairn-storage format of " + cairn + " failed: " + format);
            }
        }
        node.start();
    }

    /** Stops every running node together (SIGTERM); they can be started again. */
    public void stop() {
        all(node -> {
            if (node.isRunning()) {
                node.stop();
            }
        });
    }

    @Override
    public void close() {
        all(BrokerProcess::close);
    }

    /** The cluster id every node is formatted with. */
    public String clusterId() {
        return clusterId;
    }

    private void all(Consumer<BrokerProcess> action) {
        List<CompletableFuture<Void>> futures = nodes.stream()
                .map(node -> CompletableFuture.runAsync(() -> action.accept(node))).toList();
        try {
            CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw e;
        }
    }

    private static Map<String, String> defaults() {
        Map<String, String> defaults = new LinkedHashMap<>();
        defaults.put("num.partitions", "1");
        defaults.put("offsets.topic.num.partitions", "1");
        defaults.put("group.initial.rebalance.delay.ms", "0");
        return defaults;
    }
}
