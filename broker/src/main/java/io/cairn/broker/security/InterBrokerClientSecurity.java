package io.cairn.broker.security;

import io.cairn.broker.config.SaslSettings;
import io.cairn.broker.config.SslSettings;
import io.cairn.isr.client.ClientSasl;
import io.cairn.isr.client.ClientTls;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.util.Map;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * How the inter-broker clients (followers, the transaction marker sender, the verifier) secure the connections they
 * open to other brokers' inter-broker listener: TLS with that listener's {@code ssl.*} settings when it is an SSL or
 * SASL_SSL listener, else PLAINTEXT; then SASL on a SASL_PLAINTEXT or SASL_SSL listener. The TLS engines sit in an
 * {@link SslFactory} that {@link DynamicSslStores} replaces with the inter-broker listener's (Kafka's replica fetcher
 * and marker sender register their client channel builders as reconfigurables of that listener): each new connection
 * takes the current engines, so after a reload new connections present and trust the new stores while open ones keep
 * the handshake they made. The SASL credentials ({@code sasl.mechanism.inter.broker.protocol} and the broker's own
 * user of that mechanism's login module on the inter-broker listener) are replaced by {@link #useSasl} when dynamic
 * configs change them ({@code io.cairn.broker.config.DynamicSaslSettings}): new connections authenticate with the new
 * ones, while open connections keep theirs and re-authenticate with them (KIP-368 forbids changing the mechanism or
 * the principal on a connection).
 *
 * <p>Thread-safe (the factory's current engines and the current SASL layer are volatile reads).
 */
public final class InterBrokerClientSecurity {

    private static final Logger LOGGER = LogManager.getLogger(InterBrokerClientSecurity.class);

    /** TLS or PLAINTEXT, under the SASL layer. */
    private final ClientTls transport;
    /** The clients' engines and the listener whose settings they follow; null for PLAINTEXT and SASL_PLAINTEXT. */
    private final SslFactory ssl;
    private final String listenerName;
    /** What new connections authenticate with; null when the listener does not authenticate with SASL. */
    private volatile SaslSettings.ClientCredentials sasl;
    /** {@link #transport} with {@link #sasl} over it: what secures each new connection. */
    private volatile ClientTls current;

    private InterBrokerClientSecurity(ClientTls transport, SslFactory ssl, String listenerName,
            SaslSettings.ClientCredentials sasl) {
        this.transport = transport;
        this.ssl = ssl;
        this.listenerName = listenerName;
        this.sasl = sasl;
        this.current = layered(transport, sasl);
    }

    /**
     * @param ssl  the inter-broker listener's SSL settings, or null when it does not speak TLS
     * @param sasl the inter-broker SASL credentials, or null when the listener does not authenticate with SASL
     * @throws io.cairn.broker.config.ConfigException when a store cannot be used (naming its key)
     */
    public static InterBrokerClientSecurity create(SslSettings ssl, SaslSettings.ClientCredentials sasl) {
        ClientTls tls = ClientTls.PLAINTEXT;
        SslFactory factory = null;
        if (ssl != null) {
            // not the listener's own validation handshakes: the listener runs them for the same settings first
            SslFactory engines = new SslFactory(SslEngineFactory.create(ssl), false);
            factory = engines;
            tls = (socket, host, port) -> engines.current().connectClient(socket, host, port);
            LOGGER.info("Inter-broker clients connect over TLS to listener {} (endpoint identification '{}')",
                    ssl.listenerName(), ssl.endpointIdentificationAlgorithm());
        }
        if (sasl != null) {
            LOGGER.info("Inter-broker clients authenticate with SASL/{}", sasl);
        }
        return new InterBrokerClientSecurity(tls, factory, ssl == null ? null : ssl.listenerName(), sasl);
    }

    private static ClientTls layered(ClientTls transport, SaslSettings.ClientCredentials sasl) {
        return sasl == null ? transport
                : new ClientSasl(transport, sasl.mechanism(), sasl.username(), sasl.password());
    }

    /**
     * What the clients secure each new connection with: the current credentials; the connection is re-authenticated
     * with the ones it authenticated with.
     */
    public ClientTls clientTls() {
        if (sasl == null) {
            return transport; // never replaced: useSasl only replaces credentials there are
        }
        return new ClientTls() {
            @Override
            public Socket secure(Socket socket, String host, int port) throws IOException {
                return current.secure(socket, host, port);
            }

            @Override
            public Secured secureSession(Socket socket, String host, int port) throws IOException {
                ClientTls now = current;
                Secured secured = now.secureSession(socket, host, port);
                return new Secured(secured.socket(), secured.sessionLifetimeMs(),
                        secured.session() != null ? secured.session() : now);
            }

            @Override
            public long reauthenticate(DataInputStream in, OutputStream out, String host, int port)
                    throws IOException {
                return current.reauthenticate(in, out, host, port);
            }

            @Override
            public String toString() {
                return "inter-broker " + current;
            }
        };
    }

    /**
     * Makes {@code next} what new connections authenticate with, when the inter-broker listener authenticates with
     * SASL (else nothing changes).
     */
    public synchronized void useSasl(SaslSettings.ClientCredentials next) {
        if (sasl == null || next == null || next.equals(sasl)) {
            return;
        }
        current = layered(transport, next);
        sasl = next;
        LOGGER.info("Inter-broker clients' new connections authenticate with SASL/{}", next);
    }

    /** What new connections authenticate with, or null without SASL. */
    public SaslSettings.ClientCredentials sasl() {
        return sasl;
    }

    /** The clients' engines by the listener whose reloaded stores they take (for {@link DynamicSslStores}). */
    public Map<String, SslFactory> reloadable() {
        return ssl == null ? Map.of() : Map.of(listenerName, ssl);
    }
}
