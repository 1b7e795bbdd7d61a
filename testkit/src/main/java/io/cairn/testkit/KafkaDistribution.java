package io.cairn.testkit;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * The reference Apache Kafka as the build resolved it from Maven Central ({@code org.apache.kafka:kafka_2.13},
 * {@code kafka-tools} and their dependencies, plus log4j2 as the logging backend): its classpath, and child JVMs
 * that run its main classes the way Kafka's {@code bin/*.sh} scripts do.
 *
 * <p>The classpath comes from, in order: the file named by {@value #CLASSPATH_FILE_PROPERTY} (written by
 * {@code maven-dependency-plugin:build-classpath} in compat-tests), the property {@value #CLASSPATH_PROPERTY}, or
 * the test JVM's own {@code java.class.path}. Stateless and thread-safe.
 */
public final class KafkaDistribution {

    /** System property naming a file that holds the Kafka classpath (path-separator joined). */
    public static final String CLASSPATH_FILE_PROPERTY = "cairn.kafka.classpath.file";

    /** System property holding the Kafka classpath itself. */
    public static final String CLASSPATH_PROPERTY = "cairn.kafka.classpath";

    /** JVM options for short-lived Kafka tools: small heap, C1 only (starts faster on few cores). */
    static final List<String> TOOL_JVM_ARGS = List.of("-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC");

    /**
     * Kafka's command-line tools that run in the test JVM ({@link InProcessTool}): admin-client commands whose
     * {@code main} prints to {@code System.out}/{@code err}, ends with Kafka's {@code Exit}, and adds no shutdown
     * hook, reads no standard input and sets no system property (checked in their 4.1.1 bytecode), and
     * {@code DumpLogSegments}, which only reads the files it is given, and {@code StorageTool}, which formats the
     * reference Kafka's storage before its first start. The console producer and consumers, the perf tests and the
     * verifiable clients still get a JVM of their own.
     */
    static final Set<String> IN_PROCESS_TOOLS = Set.of(
            "kafka.admin.ConfigCommand",
            "kafka.tools.DumpLogSegments",
            "kafka.tools.StorageTool",
            "org.apache.kafka.tools.AclCommand",
            "org.apache.kafka.tools.BrokerApiVersionsCommand",
            "org.apache.kafka.tools.ClusterTool",
            "org.apache.kafka.tools.DelegationTokenCommand",
            "org.apache.kafka.tools.DeleteRecordsCommand",
            "org.apache.kafka.tools.FeatureCommand",
            "org.apache.kafka.tools.GetOffsetShell",
            "org.apache.kafka.tools.LeaderElectionCommand",
            "org.apache.kafka.tools.LogDirsCommand",
            "org.apache.kafka.tools.MetadataQuorumCommand",
            "org.apache.kafka.tools.TopicCommand",
            "org.apache.kafka.tools.TransactionsCommand",
            "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
            "org.apache.kafka.tools.reassign.ReassignPartitionsCommand");

    /** The Scala tools of {@link #IN_PROCESS_TOOLS} that print through {@code scala.Console}. */
    private static final Set<String> SCALA_CONSOLE_TOOLS = Set.of("kafka.tools.DumpLogSegments");

    /** System property that, set to {@code false}, runs every tool in a JVM of its own. */
    public static final String IN_PROCESS_PROPERTY = "cairn.tools.inProcess";

    private KafkaDistribution() {
    }

    /** The classpath that runs {@code kafka.Kafka} and Kafka's tools; fails if {@code kafka_2.13} is missing. */
    public static String classpath() {
        String classpath;
        String file = System.getProperty(CLASSPATH_FILE_PROPERTY);
        if (file != null && !file.isBlank()) {
            try {
                classpath = Files.readString(Paths.get(file), StandardCharsets.UTF_8).trim();
            } catch (IOException e) {
                throw new UncheckedIOException("Could not read the Kafka classpath file " + file + " (system property "
                        + CLASSPATH_FILE_PROPERTY + ")", e);
            }
        } else {
            classpath = System.getProperty(CLASSPATH_PROPERTY, System.getProperty("java.class.path"));
        }
        boolean hasCore = Arrays.stream(classpath.split(File.pathSeparator))
                .anyMatch(entry -> Paths.get(entry).getFileName().toString().startsWith("kafka_2.13-"));
        if (!hasCore) {
            throw new IllegalStateException("No kafka_2.13 jar on the Kafka classpath; set " + CLASSPATH_FILE_PROPERTY
                    + " (compat-tests' pom writes it with dependency:build-classpath) or put "
                    + "org.apache.kafka:kafka_2.13 on the test classpath");
        }
        return classpath;
    }

    /**
     * A child JVM running one of Kafka's tools ({@code org.apache.kafka.tools.BrokerApiVersionsCommand},
     * {@code kafka.tools.StorageTool}, ...) with Kafka's classpath and its logging at WARN on stderr, so stdout
     * holds only what the tool prints; or, for the {@link #IN_PROCESS_TOOLS} when their classes are on this JVM's
     * classpath (compat-tests) and {@value #IN_PROCESS_PROPERTY} is not {@code false}, a run of its {@code main} in
     * this JVM, unless the caller then sets JVM options, a classpath or a working directory.
     */
    public static JavaTool.Builder tool(String mainClass) {
        JavaTool.Builder builder = JavaTool.builder(mainClass)
                .classpath(classpath())
                .jvmArgs(toolJvmArgs().toArray(String[]::new));
        if (IN_PROCESS_TOOLS.contains(mainClass) && !"false".equals(System.getProperty(IN_PROCESS_PROPERTY))
                && InProcessTool.available(mainClass, SCALA_CONSOLE_TOOLS.contains(mainClass))) {
            builder.inProcess();
        }
        return builder;
    }

    /** The JVM options of a tool's JVM: a small heap, quick start, logging at WARN on stderr. */
    static List<String> toolJvmArgs() {
        List<String> args = new ArrayList<>(TOOL_JVM_ARGS);
        args.add("-Dlog4j2.configurationFile=" + ToolsLog4jConfig.FILE);
        return args;
    }

    /**
     * Writes a log4j2 properties configuration that logs everything at {@code level} with Kafka's pattern to the
     * console {@code target} ({@code SYSTEM_OUT} or {@code SYSTEM_ERR}); returns {@code file}.
     */
    static Path writeLog4jConfig(Path file, String level, String target) {
        String config = """
                status = warn
                appender.console.type = Console
                appender.console.name = CONSOLE
                appender.console.target = %s
                appender.console.layout.type = PatternLayout
                appender.console.layout.pattern = [%%d] %%p %%m (%%c)%%n
                rootLogger.level = %s
                rootLogger.appenderRef.console.ref = CONSOLE
                """.formatted(target, level);
        try {
            Files.createDirectories(file.getParent());
            return Files.writeString(file, config, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("Could not write " + file, e);
        }
    }

    /** One tools log4j2 configuration per test JVM, written on first use and deleted when the JVM exits. */
    private static final class ToolsLog4jConfig {

        private static final Path FILE = create();

        private static Path create() {
            Path dir = TestDirectories.createTempDirectory("cairn-kafka-tools-");
            Path file = writeLog4jConfig(dir.resolve("tools-log4j2.properties"), "WARN", "SYSTEM_ERR");
            dir.toFile().deleteOnExit();
            file.toFile().deleteOnExit();
            return file;
        }
    }
}
