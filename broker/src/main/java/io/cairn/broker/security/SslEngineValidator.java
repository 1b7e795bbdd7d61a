package io.cairn.broker.security;

import java.nio.ByteBuffer;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;

/**
 * A TLS handshake between two engines in memory, with no socket: how a reload of the inter-broker listener's stores
 * is checked before use, as Kafka's {@code SslFactory.SslEngineValidator} does: a broker still on the old stores must
 * be able to talk to one on the new stores, in both directions (old server with new client, new server with old
 * client; host names are not checked).
 *
 * <p>Stateless; each call uses its own engines and buffers.
 */
final class SslEngineValidator {

    /** Enough rounds for any handshake (TLS 1.2 with client authentication takes about five). */
    private static final int MAX_ROUNDS = 100;
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    private SslEngineValidator() {
    }

    /** Kafka's check: handshakes between {@code old} and {@code next}, each side once the server. */
    static void validate(SslEngineFactory old, SslEngineFactory next) throws SSLException {
        closing(next.newValidationClientEngine(), old.newServerEngine());
        closing(old.newValidationClientEngine(), next.newServerEngine());
    }

    private static void closing(SSLEngine client, SSLEngine server) throws SSLException {
        try {
            handshake(client, server);
        } finally {
            client.closeOutbound();
            server.closeOutbound();
        }
    }

    /**
     * Completes a handshake between {@code client} and {@code server}, or throws the engines' failure; the engines
     * are left open (their sessions tell what was agreed).
     */
    static void handshake(SSLEngine client, SSLEngine server) throws SSLException {
        Side clientSide = new Side(client);
        Side serverSide = new Side(server);
        client.beginHandshake();
        server.beginHandshake();
        for (int round = 0; round < MAX_ROUNDS; round++) {
            if (clientSide.done() && serverSide.done()) {
                return;
            }
            clientSide.step(serverSide);
            serverSide.step(clientSide);
        }
        throw new SSLException("Did not finish handshake, handshake status: " + client.getHandshakeStatus()
                + " / " + server.getHandshakeStatus());
    }

    /** One engine and what it has written for its peer. */
    private static final class Side {
        private final SSLEngine engine;
        /** Records written by this engine, not yet read by the peer (in write mode). */
        private ByteBuffer out;
        private ByteBuffer app;
        private boolean started;

        Side(SSLEngine engine) {
            this.engine = engine;
            this.out = ByteBuffer.allocate(4 * engine.getSession().getPacketBufferSize());
            this.app = ByteBuffer.allocate(engine.getSession().getApplicationBufferSize());
        }

        boolean done() {
            SSLEngineResult.HandshakeStatus status = engine.getHandshakeStatus();
            return started && (status == SSLEngineResult.HandshakeStatus.NOT_HANDSHAKING
                    || status == SSLEngineResult.HandshakeStatus.FINISHED);
        }

        /** Runs the engine until it needs the peer's records, writing what it has to say into {@link #out}. */
        void step(Side peer) throws SSLException {
            started = true;
            while (true) {
                switch (engine.getHandshakeStatus()) {
                    case NEED_TASK -> {
                        Runnable task;
                        while ((task = engine.getDelegatedTask()) != null) {
                            task.run();
                        }
                    }
                    case NEED_WRAP -> {
                        SSLEngineResult result = engine.wrap(EMPTY, out);
                        if (result.getStatus() == SSLEngineResult.Status.BUFFER_OVERFLOW) {
                            if (out.position() > 0) {
                                return; // the peer reads first
                            }
                            out = ByteBuffer.allocate(2 * out.capacity());
                        } else if (result.getStatus() != SSLEngineResult.Status.OK) {
                            throw new SSLException("Unexpected handshake status: " + result.getStatus());
                        }
                    }
                    case NEED_UNWRAP, NEED_UNWRAP_AGAIN -> {
                        peer.out.flip();
                        SSLEngineResult result;
                        try {
                            result = engine.unwrap(peer.out, app);
                        } finally {
                            peer.out.compact();
                        }
                        if (result.getStatus() == SSLEngineResult.Status.BUFFER_UNDERFLOW) {
                            return; // waits for the peer's records
                        } else if (result.getStatus() == SSLEngineResult.Status.BUFFER_OVERFLOW) {
                            app = ByteBuffer.allocate(2 * app.capacity());
                        } else if (result.getStatus() == SSLEngineResult.Status.CLOSED) {
                            throw new SSLException("Unexpected handshake status: " + result.getStatus());
                        }
                    }
                    default -> {
                        return;
                    }
                }
            }
        }
    }
}
