package io.cairn.broker;

import io.cairn.broker.config.SslSettings;
import io.cairn.broker.security.SslEngineFactory;
import io.cairn.metadata.QuorumTls;
import java.net.Socket;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509KeyManager;
import javax.net.ssl.X509TrustManager;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The SSL or SASL_SSL controller listener's key and trust stores as the metadata quorum's TLS uses them, replaceable
 * while the quorum runs (Kafka reloads a controller listener's stores on a
 * {@code listener.name.<controller>.ssl.keystore.*} change). The quorum takes them in one of two forms, by the
 * listener's protocol:
 * <ul>
 *   <li>SSL: the {@link QuorumTls} handed to the quorum's transport holds a key manager and a trust manager that ask
 *   the current stores on every handshake, so after {@link #replace} every new TLS connection of the quorum (to this
 *   node's Raft server, and from its channels and clients to the other nodes) presents the new certificate and checks
 *   peers with the new trust store, while the connections already open keep the session they negotiated. This works
 *   because Ratis' {@code GrpcTlsConfig} takes key and trust manager objects and hands them to Netty's
 *   {@code SslContextBuilder}, which with the OpenSSL (BoringSSL) provider and with the JDK's asks the key manager for
 *   the key material of each handshake (Netty does not cache material of a key manager it did not build).</li>
 *   <li>SASL_SSL: the quorum front ({@link io.cairn.broker.quorum.SaslQuorumFront}) runs the JDK's TLS itself and
 *   asks {@link #engines()} for each connection it accepts or opens, so its new connections take the engines of the
 *   new stores (a new SSL context, as Kafka's listener builds one: no session of the old stores is resumed) and the
 *   relayed connections already open keep theirs.</li>
 * </ul>
 *
 * <p>Thread-safe: the current stores are one volatile value, written by {@link #replace} (the dynamic config applier)
 * and read by the transport's event loops and the front's threads.
 */
public final class QuorumStores {

    private static final Logger LOGGER = LogManager.getLogger(QuorumStores.class);

    /** The stores handshakes use now: written by replace, read on every handshake. */
    private volatile Loaded current;
    private final QuorumTls tls;

    /** One load of the stores: as managers (gRPC's TLS) and as the JDK engines over them (the quorum front's). */
    private record Loaded(X509KeyManager key, X509TrustManager trust, SslEngineFactory engines) {
    }

    private QuorumStores(Loaded stores, boolean mutual, boolean checkHostName) {
        this.current = stores;
        this.tls = new QuorumTls(new CurrentKeyManager(), new CurrentTrustManager(), mutual, checkHostName);
    }

    /**
     * Loads the stores of {@code settings} (the SSL or SASL_SSL controller listener's, with a key store).
     *
     * @throws io.cairn.broker.config.ConfigException naming the key whose value cannot be used
     */
    static QuorumStores load(SslSettings settings) {
        SslEngineFactory engines = SslEngineFactory.create(settings);
        QuorumTls loaded = ControllerListenerTls.quorumTls(settings, engines.loadedManagers());
        return new QuorumStores(new Loaded(loaded.keyManager(), loaded.trustManager(), engines), loaded.mutual(),
                loaded.checkHostName());
    }

    /** The controller listener these stores are of. */
    String listenerName() {
        return current.engines().settings().listenerName();
    }

    /** What the quorum's transport is given (SSL): managers that follow {@link #replace}. */
    QuorumTls tls() {
        return tls;
    }

    /**
     * The JDK engines of the current stores, for one new connection of the quorum front (SASL_SSL); also what the
     * listener's reloads start from.
     */
    SslEngineFactory engines() {
        return current.engines();
    }

    /**
     * Makes the stores {@code replacement} loaded (the controller listener's new, checked settings) those of every
     * new quorum connection. {@code ssl.client.auth} and the host name check stay as the quorum started.
     */
    void replace(SslEngineFactory replacement) {
        QuorumTls loaded = ControllerListenerTls.quorumTls(replacement.settings(), replacement.loadedManagers());
        current = new Loaded(loaded.keyManager(), loaded.trustManager(), replacement);
        LOGGER.info("The metadata quorum's new TLS connections use the new stores of controller listener {}: {}",
                replacement.settings().listenerName(), replacement);
    }

    /** Asks the current key manager (an alias it chose is looked up in the same one unless a replace came between). */
    private final class CurrentKeyManager extends X509ExtendedKeyManager {

        @Override
        public String[] getClientAliases(String keyType, Principal[] issuers) {
            return current.key().getClientAliases(keyType, issuers);
        }

        @Override
        public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
            return current.key().chooseClientAlias(keyType, issuers, socket);
        }

        @Override
        public String[] getServerAliases(String keyType, Principal[] issuers) {
            return current.key().getServerAliases(keyType, issuers);
        }

        @Override
        public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
            return current.key().chooseServerAlias(keyType, issuers, socket);
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            return current.key().getCertificateChain(alias);
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            return current.key().getPrivateKey(alias);
        }

        @Override
        public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
            X509KeyManager key = current.key();
            return key instanceof X509ExtendedKeyManager extended
                    ? extended.chooseEngineClientAlias(keyType, issuers, engine)
                    : key.chooseClientAlias(keyType, issuers, null);
        }

        @Override
        public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
            X509KeyManager key = current.key();
            return key instanceof X509ExtendedKeyManager extended
                    ? extended.chooseEngineServerAlias(keyType, issuers, engine)
                    : key.chooseServerAlias(keyType, issuers, null);
        }
    }

    /** Asks the current trust manager, with the engine or socket when it takes them (its host name check). */
    private final class CurrentTrustManager extends X509ExtendedTrustManager {

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            current.trust().checkClientTrusted(chain, authType);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            current.trust().checkServerTrusted(chain, authType);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            X509TrustManager trust = current.trust();
            if (trust instanceof X509ExtendedTrustManager extended) {
                extended.checkClientTrusted(chain, authType, socket);
            } else {
                trust.checkClientTrusted(chain, authType);
            }
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            X509TrustManager trust = current.trust();
            if (trust instanceof X509ExtendedTrustManager extended) {
                extended.checkServerTrusted(chain, authType, socket);
            } else {
                trust.checkServerTrusted(chain, authType);
            }
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            X509TrustManager trust = current.trust();
            if (trust instanceof X509ExtendedTrustManager extended) {
                extended.checkClientTrusted(chain, authType, engine);
            } else {
                trust.checkClientTrusted(chain, authType);
            }
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            X509TrustManager trust = current.trust();
            if (trust instanceof X509ExtendedTrustManager extended) {
                extended.checkServerTrusted(chain, authType, engine);
            } else {
                trust.checkServerTrusted(chain, authType);
            }
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return current.trust().getAcceptedIssuers();
        }
    }
}
