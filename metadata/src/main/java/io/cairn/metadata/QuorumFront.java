package io.cairn.metadata;

import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * What authenticates the metadata quorum's links when the controller listener maps to SASL_PLAINTEXT or SASL_SSL.
 * The quorum's transport (Ratis over gRPC) has TLS but no SASL, so the node's Raft server binds a private loopback
 * port and the front stands before it:
 * <ul>
 *   <li>inbound, it serves the node's public quorum address (the controller listener, or a broker-only node's
 *   metadata listener), runs TLS (SASL_SSL) and a SASL exchange on each connection as Kafka's controller listener
 *   does, and only then relays the connection's bytes to the Raft server;</li>
 *   <li>outbound, every connection this node's Raft server or clients open to a peer's public address is dialled to a
 *   loopback address the front gives ({@link #route}), from where it is carried to that peer over TLS and SASL with
 *   this node's own credentials.</li>
 * </ul>
 * Implementations are thread-safe.
 */
public interface QuorumFront extends AutoCloseable {

    /**
     * Starts serving {@code publicAddress} (a wildcard host for every interface), relaying each authenticated
     * connection to the Raft server at {@code raftServer}.
     *
     * @throws IOException when the public address cannot be bound
     */
    void serve(InetSocketAddress publicAddress, InetSocketAddress raftServer) throws IOException;

    /**
     * The loopback address whose connections reach the peer at {@code host:port} authenticated (the same address for
     * every call with that peer).
     *
     * @throws IOException when no local address can be bound for it
     */
    InetSocketAddress route(String host, int port) throws IOException;

    /** Stops serving and routing; open links are closed. */
    @Override
    void close();
}
