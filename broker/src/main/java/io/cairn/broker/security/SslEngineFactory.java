package io.cairn.broker.security;

import io.cairn.broker.config.ConfigException;
import io.cairn.broker.config.SslSettings;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.KeyStoreException;
import java.security.NoSuchAlgorithmException;
import java.security.NoSuchProviderException;
import java.security.Principal;
import java.security.SecureRandom;
import java.security.UnrecoverableKeyException;
import java.util.Locale;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.security.auth.x500.X500Principal;

/**
 * Builds TLS engines from one listener's {@link SslSettings} with the JDK's provider, as Kafka's default engine
 * factory does: an {@link SSLContext} of {@code ssl.protocol} over the key store (JKS, PKCS12 or PEM) and the trust
 * store (or the JVM's trusted certificates), engines restricted to {@code ssl.enabled.protocols} and
 * {@code ssl.cipher.suites}; server engines ask for client certificates per {@code ssl.client.auth}, client engines
 * check the server's host name per {@code ssl.endpoint.identification.algorithm}. Every store is loaded, and every
 * protocol and cipher suite checked, when the factory is created, so a bad setting fails startup with one
 * {@link ConfigException} naming its key. The stores stay readable ({@link #keystore()}, {@link #truststore()}) for
 * the checks of a reload ({@link SslFactory}).
 *
 * <p>Immutable and thread-safe.
 */
public final class SslEngineFactory {

    private final SslSettings settings;
    private final SSLContext context;
    private final String[] protocols;
    private final String[] cipherSuites;
    private final SslPrincipalMapper principalMapper;
    /** The key and trust stores loaded, and their files' modification times then (for a reload's checks). */
    private final LoadedStores stores;

    /** What the context was built from: the stores (null when none) and their files' modification times. */
    private record LoadedStores(KeyStore keystore, FileTime keystoreModified, KeyStore truststore,
                                FileTime truststoreModified) {
    }

    private SslEngineFactory(SslSettings settings, SSLContext context, LoadedStores stores,
                             SslPrincipalMapper principalMapper) {
        this.settings = settings;
        this.context = context;
        this.stores = stores;
        this.protocols = settings.enabledProtocols().toArray(new String[0]);
        this.cipherSuites = settings.cipherSuites().isEmpty() ? null : settings.cipherSuites().toArray(new String[0]);
        this.principalMapper = principalMapper;
    }

    /**
     * Loads the stores of {@code settings} and checks its protocols and cipher suites.
     *
     * @throws ConfigException naming the key whose value cannot be used
     */
    public static SslEngineFactory create(SslSettings settings) {
        SslPrincipalMapper mapper;
        try {
            mapper = SslPrincipalMapper.fromRules(settings.principalMappingRules());
        } catch (IllegalArgumentException e) {
            throw ConfigException.invalid(settings.keyOf(SslSettings.PRINCIPAL_MAPPING_RULES),
                    settings.principalMappingRules(), e.getMessage());
        }
        // Kafka takes a store file's modification time before loading it, so a write during the load is seen later.
        FileTime keystoreModified = modified(settings.hasKeystore() ? settings.get(SslSettings.KEYSTORE_LOCATION)
                : null);
        FileTime truststoreModified = modified(settings.hasTruststore()
                ? settings.get(SslSettings.TRUSTSTORE_LOCATION) : null);
        KeyStore keystore = settings.hasKeystore() ? keystore(settings) : null;
        KeyStore truststore = settings.hasTruststore() ? truststore(settings) : null;
        SslEngineFactory factory = new SslEngineFactory(settings, context(settings, keystore, truststore),
                new LoadedStores(keystore, keystoreModified, truststore, truststoreModified), mapper);
        factory.checkEngineSettings();
        return factory;
    }

    /** The modification time of the file at {@code location}, or null when there is none or it cannot be read. */
    private static FileTime modified(String location) {
        if (location == null) {
            return null;
        }
        try {
            return Files.getLastModifiedTime(Path.of(location));
        } catch (IOException e) {
            return null;
        }
    }

    private static SSLContext context(SslSettings settings, KeyStore keystore, KeyStore truststore) {
        SSLContext context;
        String provider = settings.get(SslSettings.PROVIDER);
        try {
            context = provider == null ? SSLContext.getInstance(settings.protocol())
                    : SSLContext.getInstance(settings.protocol(), provider);
        } catch (NoSuchAlgorithmException e) {
            throw ConfigException.invalid(settings.keyOf(SslSettings.PROTOCOL), settings.protocol(),
                    "this JVM has no SSL context for the protocol: " + e.getMessage());
        } catch (NoSuchProviderException e) {
            throw ConfigException.invalid(settings.keyOf(SslSettings.PROVIDER), provider, "no such security "
                    + "provider in this JVM");
        }
        KeyManager[] keyManagers = keystore != null ? keyManagers(settings, keystore) : null;
        TrustManagerFactory trust = trustManagers(settings, truststore);
        SecureRandom random = null;
        String randomName = settings.get(SslSettings.SECURE_RANDOM_IMPLEMENTATION);
        if (randomName != null) {
            try {
                random = SecureRandom.getInstance(randomName);
            } catch (NoSuchAlgorithmException e) {
                throw ConfigException.invalid(settings.keyOf(SslSettings.SECURE_RANDOM_IMPLEMENTATION), randomName,
                        "no such secure random implementation in this JVM");
            }
        }
        try {
            context.init(keyManagers, trust.getTrustManagers(), random);
        } catch (GeneralSecurityException e) {
            throw ConfigException.invalid(settings.keyOf(SslSettings.PROTOCOL), settings.protocol(),
                    "cannot initialise the SSL context: " + e.getMessage());
        }
        return context;
    }

    /** Loads the key store of {@code settings} (a file of the JVM's types, a PEM file or inline PEM). */
    private static KeyStore keystore(SslSettings settings) {
        String keyPasswordText = settings.get(SslSettings.KEY_PASSWORD);
        if (SslSettings.PEM.equalsIgnoreCase(settings.keystoreType())) {
            char[] keyPassword = keyPasswordText == null ? null : keyPasswordText.toCharArray();
            String key;
            String chain;
            String location = settings.get(SslSettings.KEYSTORE_LOCATION);
            String sourceKey;
            if (location != null) {
                key = readText(settings, SslSettings.KEYSTORE_LOCATION, location, "key store");
                chain = key;
                sourceKey = settings.keyOf(SslSettings.KEYSTORE_LOCATION);
            } else {
                key = settings.get(SslSettings.KEYSTORE_KEY);
                chain = settings.get(SslSettings.KEYSTORE_CERTIFICATE_CHAIN);
                sourceKey = settings.keyOf(SslSettings.KEYSTORE_KEY);
            }
            try {
                return PemStores.keyStore(key, chain, keyPassword);
            } catch (GeneralSecurityException | IOException e) {
                throw ConfigException.invalid(sourceKey, location != null ? location : "[hidden]",
                        "invalid PEM key store: " + message(e));
            }
        }
        return loadStore(settings, SslSettings.KEYSTORE_TYPE, SslSettings.KEYSTORE_LOCATION,
                SslSettings.KEYSTORE_PASSWORD, settings.get(SslSettings.KEYSTORE_PASSWORD).toCharArray(),
                "key store");
    }

    private static KeyManager[] keyManagers(SslSettings settings, KeyStore store) {
        String algorithm = settings.get(SslSettings.KEYMANAGER_ALGORITHM) != null
                ? settings.get(SslSettings.KEYMANAGER_ALGORITHM) : KeyManagerFactory.getDefaultAlgorithm();
        KeyManagerFactory factory;
        try {
            factory = KeyManagerFactory.getInstance(algorithm);
        } catch (NoSuchAlgorithmException e) {
            throw ConfigException.invalid(settings.keyOf(SslSettings.KEYMANAGER_ALGORITHM), algorithm,
                    "no such key manager algorithm in this JVM");
        }
        String keyPasswordText = settings.get(SslSettings.KEY_PASSWORD);
        char[] keyPassword;
        if (SslSettings.PEM.equalsIgnoreCase(settings.keystoreType())) {
            keyPassword = keyPasswordText != null ? keyPasswordText.toCharArray() : new char[0];
        } else {
            keyPassword = (keyPasswordText != null ? keyPasswordText : settings.get(SslSettings.KEYSTORE_PASSWORD))
                    .toCharArray();
        }
        try {
            factory.init(store, keyPassword);
        } catch (UnrecoverableKeyException e) {
            throw ConfigException.invalid(settings.keyOf(keyPasswordText != null ? SslSettings.KEY_PASSWORD
                    : SslSettings.KEYSTORE_PASSWORD), "[hidden]", "cannot recover the private key of the key store "
                    + "with this password: " + message(e));
        } catch (GeneralSecurityException e) {
            throw ConfigException.invalid(settings.keyOf(SslSettings.KEYSTORE_LOCATION),
                    settings.get(SslSettings.KEYSTORE_LOCATION), "cannot use the key store: " + message(e));
        }
        return factory.getKeyManagers();
    }

    /** Loads the trust store of {@code settings} (a file of the JVM's types, a PEM file or inline PEM). */
    private static KeyStore truststore(SslSettings settings) {
        String location = settings.get(SslSettings.TRUSTSTORE_LOCATION);
        if (SslSettings.PEM.equalsIgnoreCase(settings.truststoreType())) {
            String pem = location != null ? readText(settings, SslSettings.TRUSTSTORE_LOCATION, location,
                    "trust store") : settings.get(SslSettings.TRUSTSTORE_CERTIFICATES);
            try {
                return PemStores.trustStore(pem);
            } catch (GeneralSecurityException | IOException e) {
                throw ConfigException.invalid(settings.keyOf(location != null ? SslSettings.TRUSTSTORE_LOCATION
                        : SslSettings.TRUSTSTORE_CERTIFICATES), location != null ? location : "[hidden]",
                        "invalid PEM trust store: " + message(e));
            }
        }
        String password = settings.get(SslSettings.TRUSTSTORE_PASSWORD);
        return loadStore(settings, SslSettings.TRUSTSTORE_TYPE, SslSettings.TRUSTSTORE_LOCATION,
                SslSettings.TRUSTSTORE_PASSWORD, password == null ? null : password.toCharArray(), "trust store");
    }

    /** The trust managers over {@code store}, or over the JVM's trusted certificates when it is null. */
    private static TrustManagerFactory trustManagers(SslSettings settings, KeyStore store) {
        String algorithm = settings.get(SslSettings.TRUSTMANAGER_ALGORITHM) != null
                ? settings.get(SslSettings.TRUSTMANAGER_ALGORITHM) : TrustManagerFactory.getDefaultAlgorithm();
        TrustManagerFactory factory;
        try {
            factory = TrustManagerFactory.getInstance(algorithm);
        } catch (NoSuchAlgorithmException e) {
            throw ConfigException.invalid(settings.keyOf(SslSettings.TRUSTMANAGER_ALGORITHM), algorithm,
                    "no such trust manager algorithm in this JVM");
        }
        try {
            factory.init(store);
        } catch (KeyStoreException e) {
            throw ConfigException.invalid(settings.keyOf(SslSettings.TRUSTSTORE_LOCATION),
                    settings.get(SslSettings.TRUSTSTORE_LOCATION), "cannot use the trust store: " + message(e));
        }
        return factory;
    }

    /** Loads a JKS or PKCS12 (or any type the JVM has) store file, naming the key at fault when it cannot. */
    private static KeyStore loadStore(SslSettings settings, String typeKey, String locationKey, String passwordKey,
            char[] password, String what) {
        String type = settings.get(typeKey);
        String location = settings.get(locationKey);
        KeyStore store;
        try {
            store = KeyStore.getInstance(type.toUpperCase(Locale.ROOT));
        } catch (KeyStoreException e) {
            throw ConfigException.invalid(settings.keyOf(typeKey), type, "unknown " + what + " type (expected "
                    + "JKS, PKCS12 or PEM)");
        }
        try (InputStream in = Files.newInputStream(Path.of(location))) {
            store.load(in, password);
        } catch (NoSuchFileException e) {
            throw ConfigException.invalid(settings.keyOf(locationKey), location, "the " + what + " file does not "
                    + "exist");
        } catch (IOException e) {
            if (e.getCause() instanceof UnrecoverableKeyException) {
                throw ConfigException.invalid(settings.keyOf(passwordKey), "[hidden]", "wrong password for the "
                        + what + " " + location);
            }
            throw ConfigException.invalid(settings.keyOf(locationKey), location, "cannot load the " + what
                    + " as " + type + ": " + message(e));
        } catch (GeneralSecurityException e) {
            throw ConfigException.invalid(settings.keyOf(locationKey), location, "cannot load the " + what
                    + " as " + type + ": " + message(e));
        }
        return store;
    }

    private static String readText(SslSettings settings, String locationKey, String location, String what) {
        try {
            return Files.readString(Path.of(location), StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw ConfigException.invalid(settings.keyOf(locationKey), location, "the " + what + " file does not "
                    + "exist");
        } catch (IOException e) {
            throw ConfigException.invalid(settings.keyOf(locationKey), location, "cannot read the " + what + ": "
                    + message(e));
        }
    }

    private static String message(Exception e) {
        return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
    }

    /**
     * The loaded stores of one listener.
     *
     * @param keyManagers the key store's managers, empty without a key store
     * @param trustManagers the trust store's managers (the JVM's trusted certificates without a trust store)
     */
    public record Managers(KeyManager[] keyManagers, TrustManager[] trustManagers) {
    }

    /** Builds one engine of each mode so that unknown protocols or cipher suites fail now, naming their key. */
    private void checkEngineSettings() {
        SSLEngine engine = context.createSSLEngine();
        try {
            engine.setEnabledProtocols(protocols);
        } catch (IllegalArgumentException e) {
            throw ConfigException.invalid(settings.keyOf(SslSettings.ENABLED_PROTOCOLS),
                    String.join(",", protocols), "not supported by this JVM: " + e.getMessage());
        }
        if (cipherSuites != null) {
            try {
                engine.setEnabledCipherSuites(cipherSuites);
            } catch (IllegalArgumentException e) {
                throw ConfigException.invalid(settings.keyOf(SslSettings.CIPHER_SUITES),
                        String.join(",", cipherSuites), "not supported by this JVM: " + e.getMessage());
            }
        }
    }

    /**
     * Key and trust managers over the stores this factory loaded (not read again), for a TLS stack that builds its own
     * context: the metadata quorum's, when the controller listener's stores are replaced.
     */
    public Managers loadedManagers() {
        return new Managers(stores.keystore() != null ? keyManagers(settings, stores.keystore()) : new KeyManager[0],
                trustManagers(settings, stores.truststore()).getTrustManagers());
    }

    /** The settings this factory was built from. */
    public SslSettings settings() {
        return settings;
    }

    /** The key store the context presents, or null when the settings have none. */
    public KeyStore keystore() {
        return stores.keystore();
    }

    /** The trust store the context checks peers with, or null for the JVM's trusted certificates. */
    public KeyStore truststore() {
        return stores.truststore();
    }

    /**
     * Whether the key or trust store file was modified since this factory loaded it (Kafka's {@code shouldBeRebuilt}
     * for an unchanged path): its modification time differs from the one taken before the load.
     */
    public boolean storeFilesModified() {
        return changed(stores.keystoreModified(), settings.hasKeystore()
                ? settings.get(SslSettings.KEYSTORE_LOCATION) : null)
                || changed(stores.truststoreModified(), settings.hasTruststore()
                ? settings.get(SslSettings.TRUSTSTORE_LOCATION) : null);
    }

    private static boolean changed(FileTime loaded, String location) {
        FileTime now = modified(location);
        return now != null && !now.equals(loaded);
    }

    /** A server-mode engine for one accepted connection. */
    public SSLEngine newServerEngine() {
        SSLEngine engine = context.createSSLEngine();
        configure(engine);
        engine.setUseClientMode(false);
        switch (settings.clientAuth()) {
            case REQUIRED -> engine.setNeedClientAuth(true);
            case REQUESTED -> engine.setWantClientAuth(true);
            default -> {
            }
        }
        return engine;
    }

    /** A client-mode engine for a connection to {@code host:port} (the host is what identification checks). */
    public SSLEngine newClientEngine(String host, int port) {
        SSLEngine engine = context.createSSLEngine(host, port);
        configure(engine);
        engine.setUseClientMode(true);
        engine.setSSLParameters(clientParameters(engine.getSSLParameters()));
        return engine;
    }

    /**
     * A client-mode engine that checks the server's certificate chain but not its host name: the in-memory handshake
     * that checks a reload of the inter-broker listener's stores ({@link SslEngineValidator}).
     */
    SSLEngine newValidationClientEngine() {
        SSLEngine engine = context.createSSLEngine();
        configure(engine);
        engine.setUseClientMode(true);
        return engine;
    }

    /**
     * Layers a client TLS socket over the connected {@code socket} to {@code host:port} and completes the handshake
     * (the blocking inter-broker clients' use); closing the returned socket closes {@code socket}.
     */
    public SSLSocket connectClient(Socket socket, String host, int port) throws IOException {
        SSLSocket ssl = (SSLSocket) context.getSocketFactory().createSocket(socket, host, port, true);
        ssl.setEnabledProtocols(protocols);
        if (cipherSuites != null) {
            ssl.setEnabledCipherSuites(cipherSuites);
        }
        ssl.setUseClientMode(true);
        ssl.setSSLParameters(clientParameters(ssl.getSSLParameters()));
        ssl.startHandshake();
        return ssl;
    }

    /**
     * Layers a server TLS socket over the accepted {@code socket} and completes the handshake (asking for or
     * requiring the client's certificate as {@code ssl.client.auth} says); closing the returned socket closes
     * {@code socket}.
     */
    public SSLSocket acceptServer(Socket socket) throws IOException {
        SSLSocket ssl = (SSLSocket) context.getSocketFactory().createSocket(socket, null, true);
        ssl.setEnabledProtocols(protocols);
        if (cipherSuites != null) {
            ssl.setEnabledCipherSuites(cipherSuites);
        }
        ssl.setUseClientMode(false);
        switch (settings.clientAuth()) {
            case REQUIRED -> ssl.setNeedClientAuth(true);
            case REQUESTED -> ssl.setWantClientAuth(true);
            default -> {
            }
        }
        ssl.startHandshake();
        return ssl;
    }

    private SSLParameters clientParameters(SSLParameters parameters) {
        String algorithm = settings.endpointIdentificationAlgorithm();
        parameters.setEndpointIdentificationAlgorithm(algorithm.isEmpty() ? null : algorithm);
        return parameters;
    }

    private void configure(SSLEngine engine) {
        engine.setEnabledProtocols(protocols);
        if (cipherSuites != null) {
            engine.setEnabledCipherSuites(cipherSuites);
        }
    }

    /**
     * The principal of the peer of {@code session}, as Kafka's default principal builder derives it: the
     * certificate's distinguished name mapped by {@code ssl.principal.mapping.rules}, or {@code User:ANONYMOUS}
     * when the peer presented no certificate.
     *
     * @throws SslPrincipalMapper.NoMatchingRuleException when no mapping rule applies to the name
     */
    public KafkaPrincipal principal(SSLSession session) throws SslPrincipalMapper.NoMatchingRuleException {
        Principal peer;
        try {
            peer = session.getPeerPrincipal();
        } catch (SSLPeerUnverifiedException e) {
            return KafkaPrincipal.ANONYMOUS;
        }
        if (!(peer instanceof X500Principal)) {
            return new KafkaPrincipal(KafkaPrincipal.USER_TYPE, peer.getName());
        }
        return new KafkaPrincipal(KafkaPrincipal.USER_TYPE, principalMapper.name(((X500Principal) peer).getName()));
    }

    @Override
    public String toString() {
        return settings.toString();
    }
}
