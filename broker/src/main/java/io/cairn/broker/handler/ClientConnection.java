package io.cairn.broker.handler;

import java.net.SocketAddress;

/**
 * What the broker knows about one client connection: the listener it arrived on, the peer, and the client software
 * it announced in ApiVersions v3+ (KIP-511).
 *
 * <p>Created by the network layer when the connection opens. Thread-safe: the announced software is written by
 * the ApiVersions handler and read by any later request of the same connection (volatile field).
 */
public final class ClientConnection {

    /** Kafka's value before a client announces itself ({@code ClientInformation.UNKNOWN_NAME_OR_VERSION}). */
    public static final String UNKNOWN = "unknown";

    private final String connectionId;
    private final String listenerName;
    private final SocketAddress remoteAddress;
    /** Written by ApiVersionsHandler (any thread), read by every request of this connection. */
    private volatile ClientSoftware clientSoftware = new ClientSoftware(UNKNOWN, UNKNOWN);

    public ClientConnection(String connectionId, String listenerName, SocketAddress remoteAddress) {
        this.connectionId = connectionId;
        this.listenerName = listenerName;
        this.remoteAddress = remoteAddress;
    }

    /** Kafka-style id: {@code localAddress-remoteAddress-sequence}. */
    public String connectionId() {
        return connectionId;
    }

    public String listenerName() {
        return listenerName;
    }

    public SocketAddress remoteAddress() {
        return remoteAddress;
    }

    public ClientSoftware clientSoftware() {
        return clientSoftware;
    }

    void registerClientSoftware(ClientSoftware software) {
        this.clientSoftware = software;
    }

    @Override
    public String toString() {
        return connectionId + " (listener " + listenerName + ", client " + clientSoftware + ")";
    }

    /** The {@code client_software_name} and {@code client_software_version} of ApiVersions v3+. */
    public record ClientSoftware(String name, String version) {

        @Override
        public String toString() {
            return name + "/" + version;
        }
    }
}
