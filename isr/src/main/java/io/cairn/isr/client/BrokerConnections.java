package io.cairn.isr.client;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One {@link BrokerConnection} per destination broker for a client that talks to several (the transaction marker
 * sender, the transaction verifier): created on first use, replaced when the broker's endpoint changes, all closed
 * together.
 *
 * <p>Thread-safe; each connection it hands out is still used by one thread at a time.
 */
public final class BrokerConnections implements AutoCloseable {

    private final String clientId;
    private final String softwareName;
    private final int socketTimeoutMs;
    private final int maxResponseBytes;
    private final List<BrokerConnection.ApiRange> apis;
    private final ClientTls tls;
    private final Map<Integer, BrokerConnection> connections = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /** Connections with these settings (see {@link BrokerConnection}); the OS default receive buffer. */
    public BrokerConnections(String clientId, String softwareName, int socketTimeoutMs, int maxResponseBytes,
                             List<BrokerConnection.ApiRange> apis) {
        this(clientId, softwareName, socketTimeoutMs, maxResponseBytes, apis, ClientTls.PLAINTEXT);
    }

    /** As the other constructor, every connection over {@code tls}. */
    public BrokerConnections(String clientId, String softwareName, int socketTimeoutMs, int maxResponseBytes,
                             List<BrokerConnection.ApiRange> apis, ClientTls tls) {
        this.tls = tls;
        this.clientId = clientId;
        this.softwareName = softwareName;
        this.socketTimeoutMs = socketTimeoutMs;
        this.maxResponseBytes = maxResponseBytes;
        this.apis = List.copyOf(apis);
    }

    /**
     * The connection to {@code broker} (not connected until its first send).
     *
     * @throws IllegalStateException once closed
     */
    public BrokerConnection get(SourceBroker broker) {
        BrokerConnection connection = connections.compute(broker.id(), (id, current) -> {
            if (current != null && current.broker().equals(broker)) {
                return current;
            }
            if (current != null) {
                current.close();
            }
            return new BrokerConnection(broker, clientId, softwareName, socketTimeoutMs, -1, maxResponseBytes, apis,
                tls);
        });
        if (closed) {
            connection.close();
            throw new IllegalStateException("closed");
        }
        return connection;
    }

    /** Closes every connection; a blocked send fails at once. */
    @Override
    public void close() {
        closed = true;
        connections.values().forEach(BrokerConnection::close);
    }
}
