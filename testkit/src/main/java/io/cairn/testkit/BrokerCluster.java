package io.cairn.testkit;

import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ApiVersionsRequestData;
import io.cairn.wire.message.ApiVersionsResponseData;
import io.cairn.wire.message.DescribeQuorumRequestData;
import io.cairn.wire.message.DescribeQuorumResponseData;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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
    /** What Cairn's controller logs when it becomes active and has replayed the log: its node id and term. */
    private static final String ACTIVE_CONTROLLER_LINE = "Active controller ";
    private static final Pattern ACTIVE_CONTROLLER = Pattern.compile("Active controller (\\d+) ready in term (\\d+)");
    private static final String METADATA_TOPIC = "__cluster_metadata";
    private static final Duration CONTROLLER_REQUEST_TIMEOUT = Duration.ofSeconds(10);
    private static final long CONTROLLER_POLL_MILLIS = 200;
    /** How long a benchmark's node may take to start: a loaded machine (other builds) slows the start down. */
    private static final Duration BENCHMARK_START_TIMEOUT = Duration.ofSeconds(240);

    private final BrokerKind kind;
    private final List<BrokerProcess> nodes;
    private final String clusterId;
    /** Further arguments every Cairn node's storage is formatted with (a Kafka node's builder has them). */
    private final List<String> formatArgs;

    private BrokerCluster(BrokerKind kind, List<BrokerProcess> nodes, String clusterId, List<String> formatArgs) {
        this.formatArgs = List.copyOf(formatArgs);
        this.kind = kind;
        this.nodes = List.copyOf(nodes);
        this.clusterId = clusterId;
    }

    /**
     * A cluster of {@code size} nodes of {@code kind} with ids {@code 1..size}, not yet started; {@code config} is
     * added to (and overrides) every node's {@code server.properties}.
     */
    public static BrokerCluster create(BrokerKind kind, int size, Map<String, String> config) {
        return create(kind, size, config, node -> Map.of());
    }

    /**
     * As {@link #create(BrokerKind, int, Map)}, and {@code perNode} gives each node settings of its own on top (for
     * example its own {@code listeners} and {@code advertised.listeners}, built from the node's ports).
     */
    public static BrokerCluster create(BrokerKind kind, int size, Map<String, String> config,
                                       Function<ClusterNode, Map<String, String>> perNode) {
        return create(kind, size, config, perNode, List.of());
    }

    /**
     * As {@link #create(BrokerKind, int, Map, Function)}, every node's storage formatted with {@code formatArgs}
     * too (arguments both storage tools take alike, e.g. {@code --add-scram ...}).
     */
    public static BrokerCluster create(BrokerKind kind, int size, Map<String, String> config,
                                       Function<ClusterNode, Map<String, String>> perNode, List<String> formatArgs) {
        return create(kind, size, config, perNode, formatArgs, List.of());
    }

    /**
     * As {@link #create(BrokerKind, int, Map, Function, List)}, every node's JVM started with {@code jvmArgs} after
     * the harness's own (e.g. a system property both brokers need).
     */
    public static BrokerCluster create(BrokerKind kind, int size, Map<String, String> config,
                                       Function<ClusterNode, Map<String, String>> perNode, List<String> formatArgs,
                                       List<String> jvmArgs) {
        return create(kind, size, config, perNode, formatArgs, jvmArgs, false);
    }

    /**
     * As {@link #create(BrokerKind, int, Map)}, every node's JVM started with exactly {@code jvmArgs} instead of the
     * harness's defaults (a 512 MB heap; for Cairn Netty's paranoid leak detector, for Kafka C1 only and the serial
     * collector, which suit tests but not a benchmark): what {@code bin/cairn-perf --brokers N} measures, with the
     * options a single broker of it runs with. Each node may take up to 240 s to start, for a loaded machine.
     */
    public static BrokerCluster createWithJvmArgs(BrokerKind kind, int size, Map<String, String> config,
                                                  List<String> jvmArgs) {
        return create(kind, size, config, node -> Map.of(), List.of(), jvmArgs, true);
    }

    private static BrokerCluster create(BrokerKind kind, int size, Map<String, String> config,
                                        Function<ClusterNode, Map<String, String>> perNode, List<String> formatArgs,
                                        List<String> jvmArgs, boolean replaceJvmArgs) {
        String[] jvm = jvmArgs.toArray(String[]::new);
        int[] ports = FreePorts.freePorts(2 * size);
        String host = FreePorts.LOOPBACK;
        StringBuilder voters = new StringBuilder();
        for (int i = 0; i < size; i++) {
            voters.append(i == 0 ? "" : ",").append(i + 1).append('@').append(host).append(':')
                    .append(ports[size + i]);
        }
        String clusterId = KafkaReferenceProcess.randomClusterId();
        List<BrokerProcess> nodes = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            ClusterNode node = new ClusterNode(i + 1, ports[i], ports[size + i], voters.toString(), clusterId);
            Map<String, String> settings = new LinkedHashMap<>(DEFAULTS);
            settings.putAll(config);
            settings.putAll(perNode.apply(node));
            nodes.add(switch (kind) {
                case CAIRN -> {
                    Map<String, String> all = node.serverProperties(host, CairnProcess.DATA_DIR_PLACEHOLDER);
                    // Each node's metrics endpoint on a port of its own (the default 9404 would be shared).
                    all.put("metrics.port", "0");
                    all.putAll(settings);
                    String text = all.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue() + "\n")
                            .collect(Collectors.joining());
                    CairnProcess.Builder builder = CairnProcess.builder().serverProperties(text, node.clientPort());
                    if (replaceJvmArgs) {
                        builder.jvmArgs(jvm).startTimeout(BENCHMARK_START_TIMEOUT);
                    } else {
                        builder.addJvmArgs(jvm);
                    }
                    yield builder.build();
                }
                case KAFKA -> {
                    KafkaReferenceProcess.Builder builder = KafkaReferenceProcess.builder().clusterNode(node)
                            .formatArgs(formatArgs.toArray(String[]::new));
                    if (replaceJvmArgs) {
                        builder.jvmArgs(jvm).startTimeout(BENCHMARK_START_TIMEOUT);
                    } else {
                        builder.addJvmArgs(jvm);
                    }
                    settings.forEach(builder::config);
                    yield builder.build();
                }
            });
        }
        return new BrokerCluster(kind, nodes, clusterId, formatArgs);
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
            List<String> args = new ArrayList<>(List.of("format", "--cluster-id", clusterId, "--config",
                    CairnProcess.CONFIG_PLACEHOLDER));
            args.addAll(formatArgs);
            cairn.beforeStart();
            JavaTool.Result format = cairn.formatStorage(args);
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

    /**
     * The node id of the active KRaft controller, waiting up to {@code timeout} for one to be known on a running
     * node. Asked with DescribeQuorum (what {@code Admin.describeMetadataQuorum} sends) of a running node that lists
     * it in ApiVersions; a broker that does not serve it is read from its log instead: the running node whose
     * {@value #ACTIVE_CONTROLLER_LINE} line carries the highest term of all the nodes' logs.
     */
    public int activeControllerId(Duration timeout) {
        Instant deadline = Instant.now().plus(timeout);
        while (true) {
            OptionalInt leader = quorumLeader();
            if (leader.isPresent()) {
                return leader.getAsInt();
            }
            if (Instant.now().isAfter(deadline)) {
                throw new IllegalStateException("No active controller known on a running node of " + nodes
                        + " within " + timeout.toSeconds() + " s");
            }
            try {
                Thread.sleep(CONTROLLER_POLL_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("Interrupted while looking for the active controller", e);
            }
        }
    }

    private OptionalInt quorumLeader() {
        for (BrokerProcess node : nodes) {
            if (!node.isRunning()) {
                continue;
            }
            try (RawKafkaClient client = RawKafkaClient.connect(node)) {
                ApiVersionsResponseData versions = client.sendAndReceive(new ApiVersionsRequestData(), (short) 0,
                        CONTROLLER_REQUEST_TIMEOUT);
                if (versions.apiKeys().stream().noneMatch(v -> v.apiKey() == ApiKey.DESCRIBE_QUORUM.id())) {
                    return leaderFromLogs();
                }
                DescribeQuorumResponseData quorum = client.sendAndReceive(new DescribeQuorumRequestData()
                        .setTopics(List.of(new DescribeQuorumRequestData.TopicData().setTopicName(METADATA_TOPIC)
                                .setPartitions(List.of(new DescribeQuorumRequestData.PartitionData())))),
                        (short) 0, CONTROLLER_REQUEST_TIMEOUT);
                for (DescribeQuorumResponseData.TopicData topic : quorum.topics()) {
                    for (DescribeQuorumResponseData.PartitionData partition : topic.partitions()) {
                        if (quorum.errorCode() == 0 && partition.errorCode() == 0 && partition.leaderId() > 0
                                && node(partition.leaderId()).isRunning()) {
                            return OptionalInt.of(partition.leaderId());
                        }
                    }
                }
            } catch (RuntimeException | AssertionError e) {
                // This node is restarting or the quorum is electing; ask the next one.
            }
        }
        return OptionalInt.empty();
    }

    private OptionalInt leaderFromLogs() {
        long bestTerm = -1;
        int best = -1;
        for (int id = 1; id <= nodes.size(); id++) {
            for (String line : node(id).logLinesContaining(ACTIVE_CONTROLLER_LINE)) {
                Matcher matcher = ACTIVE_CONTROLLER.matcher(line);
                if (matcher.find() && Long.parseLong(matcher.group(2)) > bestTerm) {
                    bestTerm = Long.parseLong(matcher.group(2));
                    best = Integer.parseInt(matcher.group(1));
                }
            }
        }
        return best > 0 && node(best).isRunning() ? OptionalInt.of(best) : OptionalInt.empty();
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
        defaults.put("transaction.state.log.num.partitions", "1");
        defaults.put("group.initial.rebalance.delay.ms", "0");
        return defaults;
    }
}
