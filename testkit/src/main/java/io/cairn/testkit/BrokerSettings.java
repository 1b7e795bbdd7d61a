package io.cairn.testkit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The settings every broker process takes, shared by {@link CairnProcess.Builder} and
 * {@link KafkaReferenceProcess.Builder}: JVM options, {@code server.properties} overrides, the feature levels the
 * storage is formatted with and the start and stop timeouts. Not thread-safe.
 *
 * @param <B> the concrete builder, returned by every setter so calls chain
 */
public abstract class BrokerSettings<B extends BrokerSettings<B>> {

    final List<String> jvmArgs;
    final Map<String, String> overrides = new LinkedHashMap<>();
    final List<String> formatFeatures = new ArrayList<>();
    final List<String> formatArgs = new ArrayList<>();
    Duration startTimeout;
    Duration stopTimeout = Duration.ofSeconds(30);

    /**
     * The system property that raises every broker's default start timeout, in seconds, for a machine too loaded to
     * start a JVM in the usual time (for example {@code FIGURES_OPTS="-Xmx512m -Dcairn.testkit.start.timeout.s=240"
     * bin/cairn-faults}); a builder's own {@link #startTimeout} still wins.
     */
    public static final String START_TIMEOUT_PROPERTY = "cairn.testkit.start.timeout.s";

    BrokerSettings(List<String> defaultJvmArgs, Duration defaultStartTimeout) {
        this.jvmArgs = new ArrayList<>(defaultJvmArgs);
        long seconds = Long.getLong(START_TIMEOUT_PROPERTY, defaultStartTimeout.toSeconds());
        this.startTimeout = Duration.ofSeconds(Math.max(seconds, defaultStartTimeout.toSeconds()));
    }

    abstract B self();

    /** Replaces the JVM options. */
    public B jvmArgs(String... values) {
        jvmArgs.clear();
        jvmArgs.addAll(List.of(values));
        return self();
    }

    /** Adds JVM options after the current ones (e.g. a {@code -D} system property the broker needs). */
    public B addJvmArgs(String... values) {
        jvmArgs.addAll(List.of(values));
        return self();
    }

    /** Sets one {@code server.properties} key, overriding the harness's value if it writes one. */
    public B config(String key, String value) {
        overrides.put(key, value);
        return self();
    }

    /**
     * Formats the storage before the first start with {@code --feature name=level} (e.g. {@code
     * transaction.version=0}), as {@code kafka-storage format} and {@code cairn-storage format} take it.
     */
    public B formatFeature(String nameAndLevel) {
        formatFeatures.add(nameAndLevel);
        return self();
    }

    /**
     * Formats the storage before the first start with these further arguments, which both storage tools take alike
     * (e.g. {@code --add-scram SCRAM-SHA-256=[name=alice,password=alice-secret]}).
     */
    public B formatArgs(String... args) {
        formatArgs.addAll(List.of(args));
        return self();
    }

    /** How long a start may take until the first ApiVersions answer. */
    public B startTimeout(Duration value) {
        startTimeout = value;
        return self();
    }

    /** How long a stop waits after SIGTERM before SIGKILL. */
    public B stopTimeout(Duration value) {
        stopTimeout = value;
        return self();
    }
}
