package io.cairn.isr.client;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;

/**
 * How an inter-broker client secures a connection it has opened: PLAINTEXT leaves the socket as it is; TLS (the
 * broker's {@code ssl.*} settings of its inter-broker listener) layers a client TLS socket over it and completes the
 * handshake, checking the leader's certificate and presenting the broker's own for mutual TLS; {@link ClientSasl}
 * authenticates over either, and re-authenticates when the session it was granted nears its end (KIP-368).
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

    /**
     * {@link #secure}, telling also how long the SASL session it authenticated lasts (KIP-368's
     * {@code session_lifetime_ms}; 0 when it does not expire or nothing authenticated, the default).
     */
    default Secured secureSession(Socket socket, String host, int port) throws IOException {
        return new Secured(secure(socket, host, port), 0L);
    }

    /**
     * Authenticates an established connection again over its streams, between two requests (KIP-368); only called
     * after {@link #secureSession} or a previous re-authentication reported a lifetime.
     *
     * @return the new session's lifetime in milliseconds (0: it does not expire)
     */
    default long reauthenticate(DataInputStream in, OutputStream out, String host, int port) throws IOException {
        throw new IOException("a connection secured by " + this + " has no SASL session to re-authenticate");
    }

    /**
     * A secured connection.
     *
     * @param socket the socket to speak the Kafka protocol on
     * @param sessionLifetimeMs the SASL session's lifetime, 0 when it does not expire
     * @param session what re-authenticates this connection (the mechanism and user it authenticated with), or null
     *                when that is the {@code ClientTls} that secured it
     */
    record Secured(Socket socket, long sessionLifetimeMs, ClientTls session) {

        /** A connection that the {@code ClientTls} that secured it re-authenticates. */
        public Secured(Socket socket, long sessionLifetimeMs) {
            this(socket, sessionLifetimeMs, null);
        }
    }
}
