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
 * The SSL controller listener's key and trust stores as the metadata quorum's TLS uses them, replaceable while the
 * quorum runs (Kafka reloads a controller listener's stores on a {@code listener.name.<controller>.ssl.keystore.*}
 * change): the {@link QuorumTls} handed to the quorum's transport holds a key manager and a trust manager that ask
 * the current stores on every handshake, so after {@link #replace} every new TLS connection of the quorum (to this
 * node's Raft server, and from its channels and clients to the other nodes) presents the new certificate and checks
 * peers with the new trust store, while the connections already open keep the session they negotiated. This works
 * because Ratis' {@code GrpcTlsConfig} takes key and trust manager objects and hands them to Netty's
 * {@code SslContextBuilder}, which with the OpenSSL (BoringSSL) provider and with the JDK's asks the key manager for
 * the key material of each handshake (Netty does not cache material of a key manager it did not build).
 *
 * <p>Thread-safe: the current managers are one volatile pair, written by {@link #replace} (the dynamic config applier)
 * and read by the transport's event loops.
 */
public final class QuorumStores {

    private static final Logger LOGGER = LogManager.getLogger(QuorumStores.class);

    /** The managers handshakes use now: written by replace, read on every handshake. */
    private volatile Managers current;
    private final QuorumTls tls;

    private record Managers(X509KeyManager key, X509TrustManager trust) {
    }

    private QuorumStores(Managers managers, boolean mutual, boolean checkHostName) {
        this.current = managers;
        this.tls = new QuorumTls(new CurrentKeyManager(), new CurrentTrustManager(), mutual, checkHostName);
    }

    /**
     * Loads the stores of {@code settings} (the SSL controller listener's, with a key store).
     *
     * @throws io.cairn.broker.config.ConfigException naming the key whose value cannot be used
     */
    static QuorumStores load(SslSettings settings) {
        QuorumTls loaded = ControllerListenerTls.quorumTls(settings);
        return new QuorumStores(new Managers(loaded.keyManager(), loaded.trustManager()), loaded.mutual(),
                loaded.checkHostName());
    }

    /** What the quorum's transport is given: managers that follow {@link #replace}. */
    QuorumTls tls() {
        return tls;
    }

    /**
     * Makes the stores {@code replacement} loaded (the controller listener's new, checked settings) those of every
     * new quorum connection. {@code ssl.client.auth} and the host name check stay as the quorum started.
     */
    void replace(SslEngineFactory replacement) {
        QuorumTls loaded = ControllerListenerTls.quorumTls(replacement.settings(), replacement.loadedManagers());
        current = new Managers(loaded.keyManager(), loaded.trustManager());
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
