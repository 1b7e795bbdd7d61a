package io.cairn.testkit;

import io.cairn.wire.protocol.Uuid;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The reference Apache Kafka ({@code kafka.Kafka} from {@code org.apache.kafka:kafka_2.13}, the version the build
 * pins) as a separate JVM: one node in KRaft combined mode ({@code process.roles=broker,controller}, node id 1, a
 * static single-voter quorum) with a PLAINTEXT client listener and a CONTROLLER listener on free loopback ports,
 * internal topics at replication factor 1, and no initial rebalance delay. Its storage is formatted with
 * {@code kafka.tools.StorageTool format} (what {@code kafka-storage.sh} runs) before the first start; restarts keep
 * the data. The classpath comes from {@link KafkaDistribution}.
 *
 * <p>Not thread-safe (see {@link BrokerProcess}).
 */
public final class KafkaReferenceProcess extends AbstractBrokerProcess {

    private static final Logger LOGGER = LogManager.getLogger(KafkaReferenceProcess.class);
    private static final String MAIN_CLASS = "kafka.Kafka";
    private static final String STORAGE_TOOL = "kafka.tools.StorageTool";
    private static final int NODE_ID = 1;
    /**
     * {@code controller.quorum.election.timeout.ms} of a broker that is its cluster's only voter, on both kinds
     * (CairnProcess too, so their configs stay alike): it has no one to wait for, and Cairn's Raft server waits one to
     * two election timeouts before it elects itself at each start (Kafka's default 1000 ms; a second per start).
     * Clusters of several voters keep the default, which is what failover scenarios measure.
     */
    static final String SOLE_VOTER_ELECTION_TIMEOUT_MS = "200";

    private final int nodeId;
    /** Set when this broker is one node of a {@link BrokerCluster}. */
    private final ClusterNode node;
    private final String voters;
    private final int controllerPort;
    private final String clusterId;
    private final String classpath;
    private final List<String> jvmArgs;
    private final Map<String, String> overrides;
    private final List<String> formatFeatures;
    private final List<String> formatArgs;
    /** Set by the first start; written and read by the thread that starts the process. */
    private boolean formatted;

    private KafkaReferenceProcess(Builder builder, int[] ports) {
        super("kafka", ports[0], builder.startTimeout, builder.stopTimeout);
        this.controllerPort = ports[1];
        this.node = builder.node;
        this.nodeId = builder.node != null ? builder.node.nodeId() : NODE_ID;
        this.voters = builder.node != null ? builder.node.voters() : nodeId + "@" + host() + ":" + controllerPort;
        this.clusterId = builder.node != null ? builder.node.clusterId() : randomClusterId();
        this.classpath = builder.classpath != null ? builder.classpath : KafkaDistribution.classpath();
        this.jvmArgs = List.copyOf(builder.jvmArgs);
        this.overrides = Map.copyOf(builder.overrides);
        this.formatFeatures = List.copyOf(builder.formatFeatures);
        this.formatArgs = List.copyOf(builder.formatArgs);
    }

    /** A reference Kafka with default settings; not yet started. */
    public static KafkaReferenceProcess create() {
        return builder().build();
    }

    /** Starts building a reference Kafka. */
    public static Builder builder() {
        return new Builder();
    }

    /** The port of the CONTROLLER listener (the KRaft quorum), not for clients. */
    public int controllerPort() {
        return controllerPort;
    }

    /** The cluster id the storage was formatted with. */
    public String clusterId() {
        return clusterId;
    }

    /** What {@code KafkaRaftServer} logs once the broker and controller are both up. */
    @Override
    String startedLogLine() {
        return "Kafka Server started";
    }

    @Override
    void beforeStart() {
        Path properties = writeServerProperties();
        KafkaDistribution.writeLog4jConfig(workDir().resolve("log4j2.properties"), "INFO", "SYSTEM_OUT");
        // A restart keeps the storage, also when log.dirs was configured away from dataDir().
        if (!formatted && !Files.exists(dataDir().resolve("meta.properties"))) {
            format(properties);
        }
        formatted = true;
    }

    @Override
    ClassDataSharing.Launch classDataSharing() {
        List<String> options = new ArrayList<>(jvmArgs);
        options.addAll(extraJvmArgs());
        return ClassDataSharing.launch(MAIN_CLASS, ClassDataSharing.entries(classpath), options);
    }

    @Override
    List<String> command() {
        List<String> command = new ArrayList<>();
        command.add(JavaTool.javaExecutable());
        command.addAll(jvmArgs);
        command.addAll(extraJvmArgs());
        command.add("-Dlog4j2.configurationFile=" + workDir().resolve("log4j2.properties"));
        command.add("-Dkafka.logs.dir=" + workDir().resolve("logs"));
        command.add("-cp");
        command.add(classpath);
        command.add(MAIN_CLASS);
        command.add(workDir().resolve("server.properties").toString());
        return command;
    }

    private Path writeServerProperties() {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("process.roles", "broker,controller");
        config.put("node.id", Integer.toString(nodeId));
        config.put("controller.quorum.voters", voters);
        config.put("listeners", "PLAINTEXT://" + host() + ":" + port() + ",CONTROLLER://" + host() + ":"
                + controllerPort);
        config.put("advertised.listeners", "PLAINTEXT://" + host() + ":" + port());
        config.put("controller.listener.names", "CONTROLLER");
        config.put("inter.broker.listener.name", "PLAINTEXT");
        config.put("listener.security.protocol.map", "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT");
        config.put("log.dirs", dataDir().toString());
        config.put("num.partitions", "1");
        config.put("offsets.topic.replication.factor", "1");
        config.put("offsets.topic.num.partitions", "1");
        config.put("transaction.state.log.replication.factor", "1");
        config.put("transaction.state.log.min.isr", "1");
        config.put("transaction.state.log.num.partitions", "1");
        config.put("share.coordinator.state.topic.replication.factor", "1");
        config.put("share.coordinator.state.topic.min.isr", "1");
        config.put("share.coordinator.state.topic.num.partitions", "1");
        config.put("group.initial.rebalance.delay.ms", "0");
        if (node == null) {
            config.put("controller.quorum.election.timeout.ms", SOLE_VOTER_ELECTION_TIMEOUT_MS);
            config.putAll(BrokerSessions.QUICK);
        }
        config.putAll(overrides);
        StringBuilder text = new StringBuilder("# Written by cairn-testkit KafkaReferenceProcess\n");
        config.forEach((key, value) -> text.append(key).append('=').append(value).append('\n'));
        Path file = workDir().resolve("server.properties");
        try {
            return Files.writeString(file, text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("Could not write " + file, e);
        }
    }

    private void format(Path properties) {
        List<String> args = new ArrayList<>(List.of("format", "--cluster-id", clusterId, "--config",
                properties.toString()));
        formatFeatures.forEach(f -> args.addAll(List.of("--feature", f)));
        args.addAll(formatArgs);
        JavaTool.Result result = KafkaDistribution.tool(STORAGE_TOOL)
                .args(args)
                .timeout(Duration.ofMinutes(2))
                .build()
                .run();
        appendToLog("==== cairn-testkit: " + STORAGE_TOOL + " format: " + result);
        if (result.exitCode() != 0) {
            throw new IllegalStateException("Formatting the Kafka storage in " + dataDir() + " failed: " + result);
        }
        LOGGER.info("Formatted Kafka storage {} (cluster id {}) in {} ms", dataDir(), clusterId,
                result.elapsed().toMillis());
    }

    /**
     * A cluster id as {@code kafka-storage.sh random-uuid} prints it: 16 random bytes, URL-safe base64, never
     * starting with {@code -} (Kafka's {@code Uuid.randomUuid} rule: such an id reads as an option on a command line,
     * and the storage tool's {@code --cluster-id} then fails with "expected one argument").
     */
    static String randomClusterId() {
        while (true) {
            UUID uuid = UUID.randomUUID();
            String id = new Uuid(uuid.getMostSignificantBits(), uuid.getLeastSignificantBits()).toString();
            if (!id.startsWith("-")) {
                return id;
            }
        }
    }

    /** Settings of a reference Kafka. Not thread-safe. */
    public static final class Builder extends BrokerSettings<Builder> {

        private String classpath;
        private ClusterNode node;

        private Builder() {
            super(List.of("-Xms128m", "-Xmx512m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                    "-Djava.awt.headless=true"), Duration.ofSeconds(120));
        }

        @Override
        Builder self() {
            return this;
        }

        /** The classpath to run Kafka with; by default {@link KafkaDistribution#classpath()}. */
        public Builder classpath(String value) {
            this.classpath = value;
            return this;
        }

        /** Makes this broker one node of a KRaft cluster (see {@link BrokerCluster}) instead of a cluster alone. */
        public Builder clusterNode(ClusterNode value) {
            this.node = value;
            return this;
        }

        /** Allocates the two ports (unless a cluster node gives them) and the work directory; not started. */
        public KafkaReferenceProcess build() {
            return new KafkaReferenceProcess(this, node != null ? new int[] {node.clientPort(), node.controllerPort()}
                    : FreePorts.freePorts(2));
        }
    }
}
