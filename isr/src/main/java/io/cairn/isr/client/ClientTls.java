package io.cairn.isr.client;

import java.io.IOException;
import java.net.Socket;

/**
 * How an inter-broker client secures a connection it has opened: PLAINTEXT leaves the socket as it is; TLS (the
 * broker's {@code ssl.*} settings of its inter-broker listener) layers a client TLS socket over it and completes the
 * handshake, checking the leader's certificate and presenting the broker's own for mutual TLS.
 *
 * <p>Implementations are thread-safe.
 */
@FunctionalInterface
public interface ClientTls {

    /** No TLS: the connection speaks PLAINTEXT. */
    ClientTls PLAINTEXT = (socket, host, port) -> socket;

    /**
     * The socket to speak the Kafka protocol on over the connected {@code socket} to {@code host:port}; the
     * handshake, if any, is done (bounded by the socket's read timeout). Closing {@code socket} closes the result.
     */
    Socket secure(Socket socket, String host, int port) throws IOException;
}
