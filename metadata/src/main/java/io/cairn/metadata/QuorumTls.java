package io.cairn.metadata;

import java.util.Objects;
import javax.net.ssl.X509KeyManager;
import javax.net.ssl.X509TrustManager;

/**
 * How the metadata quorum's links are secured when the controller listener maps to SSL in
 * {@code listener.security.protocol.map}: every Raft server (a controller's, which serves the controller listener, and
 * a broker-only node's metadata listener) speaks TLS with this node's certificate, and every channel to one (voter to
 * voter, leader to listener, a node's commands and heartbeats to the active controller) checks the peer's certificate
 * against the trust store. The stores are the controller listener's ({@code listener.name.<controller>.ssl.*} over
 * {@code ssl.*}), loaded by the broker's SSL code; this module only hands them to the transport.
 *
 * <p>Immutable; the managers are the JDK's, thread-safe.
 *
 * @param keyManager    this node's key and certificate chain (the listener's key store)
 * @param trustManager  the certificates a peer's chain must lead to (the trust store, or the JVM's)
 * @param mutual        {@code ssl.client.auth=required}: each server insists on, and each client presents, a
 *                      certificate (mutual TLS); otherwise only servers are authenticated
 * @param checkHostName {@code ssl.endpoint.identification.algorithm} is set (Kafka's default {@code https}): a client
 *                      checks that the server's certificate names the host it dialled
 */
public record QuorumTls(X509KeyManager keyManager, X509TrustManager trustManager, boolean mutual,
                        boolean checkHostName) {

    public QuorumTls {
        Objects.requireNonNull(keyManager, "keyManager");
        Objects.requireNonNull(trustManager, "trustManager");
    }

    @Override
    public String toString() {
        return "TLS (" + (mutual ? "mutual" : "servers authenticated") + (checkHostName ? ", host names checked"
                : ", host names not checked") + ")";
    }
}
