package io.cairn.broker;

import io.cairn.broker.config.BrokerConfig;
import io.cairn.broker.handler.ApiHandler;
import io.cairn.isr.ReplicaManager;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

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

    /** The partitions the broker hosts. */
    ReplicaManager replicaManager() {
        return server.replicaManager();
    }

    public RawConnection connect() throws java.io.IOException {
        return new RawConnection("127.0.0.1", port());
    }

    @Override
    public void close() {
        server.close();
    }
}
