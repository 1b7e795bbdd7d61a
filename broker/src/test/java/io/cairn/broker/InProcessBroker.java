package io.cairn.broker;

import static org.awaitility.Awaitility.await;

import io.cairn.broker.config.BrokerConfig;
import io.cairn.broker.handler.ApiHandler;
import io.cairn.isr.ReplicaManager;
import io.cairn.metadata.image.TopicPartition;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

/**
 * A {@link CairnServer} in the test JVM on an ephemeral port of every interface (dual-stack), with its data in a
 * temporary directory. Not thread-safe.
 */
public final class InProcessBroker implements AutoCloseable {

    private final CairnServer server;

    private InProcessBroker(CairnServer server) {
        this.server = server;
    }

    public static InProcessBroker start(Path dataDir, Map<String, String> overrides) throws InterruptedException {
        return start(dataDir, overrides, List.of());
    }

    public static InProcessBroker start(Path dataDir, Map<String, String> overrides, List<ApiHandler<?, ?>> handlers)
            throws InterruptedException {
        Map<String, String> props = new HashMap<>();
        props.put("listeners", "PLAINTEXT://:0");
        props.put("log.dirs", dataDir.toString());
        props.put("metrics.port", "0");
        props.putAll(overrides);
        CairnServer server = new CairnServer(BrokerConfig.fromMap(props), handlers);
        try {
            server.start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new InProcessBroker(server);
    }

    /** The port of the Prometheus endpoint (a free one). */
    public int metricsPort() {
        return server.metricsPort();
    }

    public int port() {
        return server.boundPort("PLAINTEXT");
    }

    /** The port listener {@code listenerName} is bound to. */
    public int boundPort(String listenerName) {
        return server.boundPort(listenerName);
    }

    /** The partitions the broker hosts. */
    ReplicaManager replicaManager() {
        return server.replicaManager();
    }

    public RawConnection connect() throws java.io.IOException {
        return new RawConnection("127.0.0.1", port());
    }

    /**
     * Waits until this broker's metadata applier hosts every partition of {@code topic} (only it opens partitions, so
     * a raw request right after CreateTopics may otherwise get NOT_LEADER_OR_FOLLOWER, as a Kafka broker answers).
     */
    public void awaitHosted(String topic, int partitions) {
        await("partitions of " + topic + " hosted").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(10))
                .until(() -> IntStream.range(0, partitions).allMatch(i -> replicaManager()
                        .partition(new TopicPartition(topic, i)).isPresent()));
    }

    @Override
    public void close() {
        server.close();
    }
}
