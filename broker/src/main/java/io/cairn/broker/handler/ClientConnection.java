package io.cairn.broker.handler;

import io.cairn.broker.config.SecurityProtocol;
import io.cairn.broker.security.KafkaPrincipal;
import java.net.SocketAddress;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the broker knows about one client connection: the listener it arrived on, the peer, the principal it
 * authenticated as ({@code User:ANONYMOUS} until a TLS handshake names a certificate or SASL names a user) and the
 * client software it announced in ApiVersions v3+ (KIP-511).
 *
 * <p>Created by the network layer when the connection opens. Thread-safe: the principal is written by the network
 * thread when the TLS handshake or the SASL exchange completes (before the first request is dispatched), the
 * announced software by the ApiVersions handler, and both are read by any later request of the same connection
 * (volatile fields).
 */
public final class ClientConnection {

    /** Kafka's value before a client announces itself ({@code ClientInformation.UNKNOWN_NAME_OR_VERSION}). */
    public static final String UNKNOWN = "unknown";

    private final String connectionId;
    private final String listenerName;
    private final SocketAddress remoteAddress;
    private final SecurityProtocol securityProtocol;
    /** Whether the SASL exchange used a delegation token (Kafka's {@code KafkaPrincipal.tokenAuthenticated}). */
    private volatile boolean tokenAuthenticated;
    /** Written by the network thread once the TLS handshake completes, read by every request. */
    private volatile KafkaPrincipal principal = KafkaPrincipal.ANONYMOUS;
    /** Written by ApiVersionsHandler (any thread), read by every request of this connection. */
    private volatile ClientSoftware clientSoftware = new ClientSoftware(UNKNOWN, UNKNOWN);
    /** What to run when the connection closes, by name (one per name); guarded by {@code this}, null once closed. */
    private Map<String, Runnable> closeActions = new LinkedHashMap<>();

    /** A connection on a PLAINTEXT listener. */
    public ClientConnection(String connectionId, String listenerName, SocketAddress remoteAddress) {
        this(connectionId, listenerName, remoteAddress, SecurityProtocol.PLAINTEXT);
    }

    public ClientConnection(String connectionId, String listenerName, SocketAddress remoteAddress,
                            SecurityProtocol securityProtocol) {
        this.connectionId = connectionId;
        this.listenerName = listenerName;
        this.remoteAddress = remoteAddress;
        this.securityProtocol = securityProtocol;
    }

    /** The security protocol of the listener the connection arrived on. */
    public SecurityProtocol securityProtocol() {
        return securityProtocol;
    }

    /** True when the connection authenticated with a delegation token (SCRAM with {@code tokenauth=true}). */
    public boolean tokenAuthenticated() {
        return tokenAuthenticated;
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

    /**
     * Who the peer authenticated as: {@code User:<name>} after SASL, its mapped certificate name on TLS, else
     * {@code User:ANONYMOUS}.
     */
    public KafkaPrincipal principal() {
        return principal;
    }

    /** Records the principal the TLS handshake or SASL exchange established (called by the network layer). */
    public void authenticated(KafkaPrincipal value) {
        authenticated(value, false);
    }

    /** As {@link #authenticated(KafkaPrincipal)}, noting whether a delegation token was the credential. */
    public void authenticated(KafkaPrincipal value, boolean viaToken) {
        this.tokenAuthenticated = viaToken;
        this.principal = value;
    }

    public ClientSoftware clientSoftware() {
        return clientSoftware;
    }

    void registerClientSoftware(ClientSoftware software) {
        this.clientSoftware = software;
    }

    /**
     * Runs {@code action} when the connection closes (Kafka's connection disconnect listeners: share sessions end
     * with their connection); an action registered again under {@code name} replaces the earlier one. Runs it at
     * once when the connection is already closed.
     */
    public void onClose(String name, Runnable action) {
        synchronized (this) {
            if (closeActions != null) {
                closeActions.put(name, action);
                return;
            }
        }
        action.run();
    }

    /** The connection closed (called by the network layer once): runs the close actions. */
    public void closed() {
        Map<String, Runnable> actions;
        synchronized (this) {
            actions = closeActions;
            closeActions = null;
        }
        if (actions != null) {
            actions.values().forEach(Runnable::run);
        }
    }

    @Override
    public String toString() {
        return connectionId + " (listener " + listenerName + ", principal " + principal + ", client " + clientSoftware
                + ")";
    }

    /** The {@code client_software_name} and {@code client_software_version} of ApiVersions v3+. */
    public record ClientSoftware(String name, String version) {

        @Override
        public String toString() {
            return name + "/" + version;
        }
    }
}
