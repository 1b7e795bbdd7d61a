package io.cairn.broker.security;

import io.cairn.broker.config.SaslSettings;
import io.cairn.broker.config.SslSettings;
import io.cairn.isr.client.ClientSasl;
import io.cairn.isr.client.ClientTls;
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
 * the handshake they made.
 *
 * <p>Immutable and thread-safe (the factory's current engines are a volatile read).
 */
public final class InterBrokerClientSecurity {

    private static final Logger LOGGER = LogManager.getLogger(InterBrokerClientSecurity.class);

    private final ClientTls clientTls;
    /** The clients' engines and the listener whose settings they follow; null for PLAINTEXT and SASL_PLAINTEXT. */
    private final SslFactory ssl;
    private final String listenerName;

    private InterBrokerClientSecurity(ClientTls clientTls, SslFactory ssl, String listenerName) {
        this.clientTls = clientTls;
        this.ssl = ssl;
        this.listenerName = listenerName;
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
            tls = new ClientSasl(tls, sasl.mechanism(), sasl.username(), sasl.password());
            LOGGER.info("Inter-broker clients authenticate with SASL/{}", sasl);
        }
        return new InterBrokerClientSecurity(tls, factory, ssl == null ? null : ssl.listenerName());
    }

    /** What the clients secure each new connection with. */
    public ClientTls clientTls() {
        return clientTls;
    }

    /** The clients' engines by the listener whose reloaded stores they take (for {@link DynamicSslStores}). */
    public Map<String, SslFactory> reloadable() {
        return ssl == null ? Map.of() : Map.of(listenerName, ssl);
    }
}
