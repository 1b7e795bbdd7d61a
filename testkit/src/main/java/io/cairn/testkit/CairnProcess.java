package io.cairn.testkit;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The real Cairn broker as a user runs it: {@code java -jar cairn-broker-<version>.jar server.properties}, a
 * separate JVM on a free loopback port with its own data directory ({@code log.dirs}), started from the jar the
 * build produced (never an in-JVM shortcut). The jar is the system property {@value #JAR_PROPERTY}, which
 * compat-tests' pom sets to {@code broker/target/cairn-broker-${project.version}.jar}.
 *
 * <p>The broker runs with Netty's leak detector at PARANOID, as the unit tests do; {@code
 * logLinesContaining("LEAK:")} finds its reports. Not thread-safe (see {@link BrokerProcess}).
 */
public final class CairnProcess extends AbstractBrokerProcess {

    /** System property naming the broker jar to run. */
    public static final String JAR_PROPERTY = "cairn.broker.jar";

    /**
     * System property: when {@code true}, brokers run on C1 only with the serial collector (compat-tests' pom sets
     * it). A test broker's start and light load then cost about 40% less CPU on two cores, without C2's compiler
     * threads and G1's helpers; the figure harnesses ({@code bin/cairn-perf}, {@code bin/cairn-failover}) leave it
     * unset and measure the broker as users run it.
     */
    public static final String QUICK_JVM_PROPERTY = "cairn.quick.jvm";

    /** In {@link Builder#serverProperties} and {@link #storageTool} text: this broker's data directory. */
    public static final String DATA_DIR_PLACEHOLDER = "${cairn.data.dir}";
    /** In {@link #storageTool} arguments: the {@code server.properties} file of this broker. */
    public static final String CONFIG_PLACEHOLDER = "${cairn.server.properties}";
    /** {@code bin/cairn-storage}'s main class. */
    private static final String STORAGE_TOOL = "io.cairn.metadata.StorageTool";
    private static final Logger LOGGER = LogManager.getLogger(CairnProcess.class);

    private static final int NODE_ID = 1;

    private final Path jar;
    private final List<String> jvmArgs;
    private final Map<String, String> overrides;
    private final String verbatimProperties;
    private final List<String> formatFeatures;
    private final List<String> formatArgs;
    private final int metricsPort;

    private CairnProcess(Builder builder) {
        super("cairn", builder.port > 0 ? builder.port : FreePorts.freePort(), builder.startTimeout,
                builder.stopTimeout);
        this.jar = builder.jar != null ? builder.jar : jarFromSystemProperty();
        this.jvmArgs = List.copyOf(builder.jvmArgs);
        this.overrides = new LinkedHashMap<>(builder.overrides);
        this.verbatimProperties = builder.verbatimProperties;
        this.formatFeatures = List.copyOf(builder.formatFeatures);
        this.formatArgs = List.copyOf(builder.formatArgs);
        this.metricsPort = otherFreePort(port());
    }

    /** A free port other than {@code taken} (which may be free again by now, being allocated but not yet bound). */
    private static int otherFreePort(int taken) {
        int[] ports = FreePorts.freePorts(2);
        return ports[0] != taken ? ports[0] : ports[1];
    }

    /**
     * The port of the broker's Prometheus endpoint ({@code metrics.port}, a free one rather than the fixed default
     * 9404, so that brokers can run side by side); not set for a broker started from verbatim properties.
     */
    public int metricsPort() {
        return metricsPort;
    }

    /** A Cairn broker with default settings; not yet started. */
    public static CairnProcess create() {
        return builder().build();
    }

    /** Starts building a Cairn broker. */
    public static Builder builder() {
        return new Builder();
    }

    /** The jar this broker runs. */
    public Path jar() {
        return jar;
    }

    /** The {@code server.properties} the broker is started with (written before each start). */
    public Path serverProperties() {
        return workDir().resolve("server.properties");
    }

    @Override
    void beforeStart() {
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("The Cairn broker jar " + jar + " does not exist; build it first "
                    + "(mvn -pl broker -am package) or point the system property " + JAR_PROPERTY + " at it");
        }
        if (verbatimProperties != null) {
            writeProperties(verbatimProperties.replace(DATA_DIR_PLACEHOLDER, dataDir().toString()));
            return;
        }
        Map<String, String> config = new LinkedHashMap<>();
        config.put("node.id", Integer.toString(NODE_ID));
        config.put("listeners", "PLAINTEXT://" + host() + ":" + port());
        config.put("advertised.listeners", "PLAINTEXT://" + host() + ":" + port());
        config.put("log.dirs", dataDir().toString());
        // The coordinators' settings the reference Kafka runs with too (KafkaReferenceProcess), so that both kinds
        // behave alike: one __consumer_offsets and one __transaction_state partition without replicas, no delay
        // before the first join; the sole voter's short election timeout, and the short broker session that each
        // start after a SIGKILL waits out (BrokerSessions).
        config.put("offsets.topic.replication.factor", "1");
        config.put("offsets.topic.num.partitions", "1");
        config.put("transaction.state.log.replication.factor", "1");
        config.put("transaction.state.log.min.isr", "1");
        config.put("transaction.state.log.num.partitions", "1");
        config.put("share.coordinator.state.topic.replication.factor", "1");
        config.put("share.coordinator.state.topic.min.isr", "1");
        config.put("share.coordinator.state.topic.num.partitions", "1");
        config.put("group.initial.rebalance.delay.ms", "0");
        config.put("controller.quorum.election.timeout.ms", KafkaReferenceProcess.SOLE_VOTER_ELECTION_TIMEOUT_MS);
        config.putAll(BrokerSessions.QUICK);
        config.put("metrics.port", Integer.toString(metricsPort));
        config.putAll(overrides);
        StringBuilder text = new StringBuilder("# Written by cairn-testkit CairnProcess\n");
        config.forEach((key, value) -> text.append(key).append('=').append(value).append('\n'));
        writeProperties(text.toString());
        boolean formatted = Files.exists(dataDir().resolve("meta.properties"));
        if ((!formatFeatures.isEmpty() || !formatArgs.isEmpty()) && !formatted) {
            format();
        }
    }

    /**
     * {@code cairn-storage format} with the requested feature levels, before the first start. A node without
     * {@code controller.quorum.voters} picks its own quorum port at each start; the storage tool wants the voters
     * named, so it reads a copy of the properties that names this node at a free port (nothing of it is stored).
     */
    private void format() {
        Path formatProperties = workDir().resolve("format.properties");
        try {
            String text = Files.readString(serverProperties(), StandardCharsets.UTF_8);
            if (!text.contains("controller.quorum.voters") && !text.contains("controller.quorum.bootstrap.servers")) {
                text += "controller.quorum.voters=" + NODE_ID + "@" + host() + ":" + otherFreePort(port()) + "\n";
            }
            Files.writeString(formatProperties, text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("Could not write " + formatProperties, e);
        }
        List<String> args = new ArrayList<>(List.of("format", "--cluster-id", KafkaReferenceProcess.randomClusterId(),
                "--config", formatProperties.toString()));
        formatFeatures.forEach(f -> args.addAll(List.of("--feature", f)));
        args.addAll(formatArgs);
        JavaTool.Result result = formatStorage(args);
        if (result.exitCode() != 0) {
            throw new IllegalStateException("Formatting the Cairn storage in " + dataDir() + " failed: " + result);
        }
    }

    /**
     * The harness's own {@code cairn-storage format} before a first start (this class's and {@link BrokerCluster}'s;
     * not {@link #storageTool}, which tests of the tool call): run in this JVM when the tool's class is on its
     * classpath, as in compat-tests, whose metadata module is the one the broker jar was built from; that saves a JVM
     * start per node; else in its own JVM as {@link #storageTool} does. The caller has written the properties.
     */
    JavaTool.Result formatStorage(List<String> args) {
        List<String> resolved = resolve(args);
        Method run = inProcessStorageTool();
        if (run == null) {
            return storageToolBuilder().args(resolved).timeout(Duration.ofSeconds(60)).build().run();
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        long start = System.nanoTime();
        int code;
        String error = "";
        try (PrintStream print = new PrintStream(out, true, StandardCharsets.UTF_8)) {
            code = (int) run.invoke(null, resolved.toArray(String[]::new), print);
        } catch (InvocationTargetException e) {
            // what the tool's main prints and exits with for a refused format
            if (!(e.getCause() instanceof IOException) && !(e.getCause() instanceof IllegalArgumentException)) {
                throw new IllegalStateException("cairn-storage " + resolved + " failed", e.getCause());
            }
            code = 1;
            error = "Error: " + e.getCause().getMessage() + System.lineSeparator();
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
        Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
        LOGGER.info("{} {} (in this JVM) exited with {} in {} ms", STORAGE_TOOL, resolved, code,
                elapsed.toMillis());
        return new JavaTool.Result(code, out.toString(StandardCharsets.UTF_8), error, elapsed);
    }

    /** {@code StorageTool.run(String[], PrintStream)} when the class is on this JVM's classpath, else null. */
    private static Method inProcessStorageTool() {
        try {
            return Class.forName(STORAGE_TOOL).getMethod("run", String[].class, PrintStream.class);
        } catch (ClassNotFoundException | NoSuchMethodException e) {
            return null;
        }
    }

    private List<String> resolve(List<String> args) {
        List<String> resolved = new ArrayList<>();
        for (String arg : args) {
            resolved.add(arg.replace(DATA_DIR_PLACEHOLDER, dataDir().toString())
                    .replace(CONFIG_PLACEHOLDER, serverProperties().toString()));
        }
        return resolved;
    }

    /** {@code cairn-storage}'s main class on this broker's jar, in a JVM that starts quickly (as Kafka's tools). */
    private JavaTool.Builder storageToolBuilder() {
        return JavaTool.builder(STORAGE_TOOL).classpath(jar.toString())
                .jvmArgs(KafkaDistribution.TOOL_JVM_ARGS.toArray(String[]::new));
    }

    private void writeProperties(String text) {
        try {
            Files.writeString(serverProperties(), text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("Could not write " + serverProperties(), e);
        }
    }

    /**
     * Runs {@code bin/cairn-storage}'s tool from this broker's jar ({@code io.cairn.metadata.StorageTool}) with
     * {@code args}, where {@value #DATA_DIR_PLACEHOLDER} stands for the data directory and {@value #CONFIG_PLACEHOLDER}
     * for the {@code server.properties} of the next start (written first); returns its output and exit code.
     */
    public JavaTool.Result storageTool(String... args) {
        beforeStart();
        List<String> resolved = resolve(List.of(args));
        return storageToolBuilder().args(resolved)
                .timeout(Duration.ofSeconds(60)).build().run();
    }

    @Override
    ClassDataSharing.Launch classDataSharing() {
        List<String> options = new ArrayList<>(jvmArgs);
        options.addAll(extraJvmArgs());
        return ClassDataSharing.launch(jar.toString(), ClassDataSharing.executableJar(jar), options);
    }

    @Override
    List<String> command() {
        List<String> command = new ArrayList<>();
        command.add(JavaTool.javaExecutable());
        command.addAll(jvmArgs);
        command.addAll(extraJvmArgs());
        command.add("-jar");
        command.add(jar.toString());
        command.add(serverProperties().toString());
        return command;
    }

    private static Path jarFromSystemProperty() {
        String value = System.getProperty(JAR_PROPERTY);
        if (value == null || value.isBlank()) {
            throw new IllegalStateException("System property " + JAR_PROPERTY + " is not set; compat-tests' pom sets "
                    + "it to broker/target/cairn-broker-<version>.jar");
        }
        return Paths.get(value).toAbsolutePath();
    }

    /** Settings of a Cairn broker. Not thread-safe. */
    public static final class Builder extends BrokerSettings<Builder> {

        private Path jar;
        private int port;
        private String verbatimProperties;

        private Builder() {
            super(defaultJvmArgs(), Duration.ofSeconds(60));
        }

        /**
         * A 512 MB heap and Netty's leak detector at PARANOID; with {@value CairnProcess#QUICK_JVM_PROPERTY} also C1
         * only and the serial collector, as the reference Kafka runs here.
         */
        private static List<String> defaultJvmArgs() {
            List<String> args = new ArrayList<>(List.of("-Xmx512m"));
            if (Boolean.getBoolean(QUICK_JVM_PROPERTY)) {
                args.addAll(List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
            }
            args.addAll(List.of("-Dio.netty.leakDetection.level=paranoid",
                    "-Dio.netty.leakDetection.targetRecords=32"));
            return args;
        }

        @Override
        Builder self() {
            return this;
        }

        /** The broker jar; by default the system property {@value CairnProcess#JAR_PROPERTY}. */
        public Builder jar(Path value) {
            this.jar = value;
            return this;
        }

        /**
         * Starts the broker from exactly this {@code server.properties} text (the harness adds no key and
         * {@link #config} overrides are ignored), with {@value CairnProcess#DATA_DIR_PLACEHOLDER} replaced by the
         * data directory; {@code clientPort} is the port of its client listener, which the harness probes.
         */
        public Builder serverProperties(String text, int clientPort) {
            this.verbatimProperties = text;
            this.port = clientPort;
            return this;
        }

        /** Allocates the port and the work directory; the broker is not started. */
        public CairnProcess build() {
            return new CairnProcess(this);
        }
    }
}
