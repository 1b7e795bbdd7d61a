package io.cairn.broker.handler;

import io.cairn.broker.security.Authorizer;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.RequestHeaderData;
import java.net.InetSocketAddress;
import java.net.SocketAddress;

/**
 * Everything about one request that is not its body: the decoded header and the connection it came on.
 *
 * <p>Immutable apart from the shared {@link ClientConnection}; thread-safe. The header object must not be modified.
 *
 * @param header the decoded request header
 * @param apiKey the API of the request
 * @param connection the client connection the request arrived on
 * @param authorizer the broker's authorizer ({@link Authorizer#NONE} without {@code authorizer.class.name})
 */
public record RequestContext(RequestHeaderData header, ApiKey apiKey, ClientConnection connection,
                             Authorizer authorizer) {

    /** A request on a broker without an authorizer (every action allowed). */
    public RequestContext(RequestHeaderData header, ApiKey apiKey, ClientConnection connection) {
        this(header, apiKey, connection, Authorizer.NONE);
    }

    /** Whether the connection's principal may perform {@code operation} on the resource (Kafka's authHelper). */
    public boolean authorize(AclOperation operation, AclResourceType resourceType, String resourceName) {
        return authorizer.authorize(connection.principal(), clientHost(), operation, resourceType, resourceName);
    }

    /** Whether the connection's principal may perform {@code operation} on the cluster. */
    public boolean authorizeCluster(AclOperation operation) {
        return authorize(operation, AclResourceType.CLUSTER, AclResourceType.CLUSTER_NAME);
    }

    /** Whether the connection's principal may perform {@code operation} on some resource of the type. */
    public boolean authorizeByResourceType(AclOperation operation, AclResourceType resourceType) {
        return authorizer.authorizeByResourceType(connection.principal(), clientHost(), operation, resourceType);
    }

    /**
     * Kafka's {@code authorizedOperations}: of the operations set in {@code supported} (bit {@code 1 << code}),
     * those the caller may perform on the resource; all of them without an authorizer.
     */
    public int authorizedOperations(AclResourceType resourceType, String resourceName, int supported) {
        if (!authorizer.enabled()) {
            return supported;
        }
        int allowed = 0;
        for (int code = 0; code < Integer.SIZE; code++) {
            if ((supported & (1 << code)) != 0
                    && authorize(AclOperation.fromCode((byte) code), resourceType, resourceName)) {
                allowed |= 1 << code;
            }
        }
        return allowed;
    }

    /** The client's IP address as ACL hosts name it ({@code InetAddress.getHostAddress}). */
    public String clientHost() {
        SocketAddress remote = connection.remoteAddress();
        if (remote instanceof InetSocketAddress && ((InetSocketAddress) remote).getAddress() != null) {
            return ((InetSocketAddress) remote).getAddress().getHostAddress();
        }
        return String.valueOf(remote);
    }

    public short apiVersion() {
        return header.requestApiVersion();
    }

    public int correlationId() {
        return header.correlationId();
    }

    /** The client id of the header, or null (v0 headers and null client ids carry none). */
    public String clientId() {
        return header.clientId();
    }

    public String listenerName() {
        return connection.listenerName();
    }

    public ClientConnection.ClientSoftware clientSoftware() {
        return connection.clientSoftware();
    }
}
