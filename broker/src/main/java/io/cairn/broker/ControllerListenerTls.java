package io.cairn.broker;

import io.cairn.broker.config.ConfigException;
import io.cairn.broker.config.SslSettings;
import io.cairn.broker.security.SslEngineFactory;
import io.cairn.metadata.QuorumTls;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import javax.net.ssl.KeyManager;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509KeyManager;
import javax.net.ssl.X509TrustManager;

/**
 * The metadata quorum's TLS from the controller listener's {@code ssl.*} settings, as Kafka 4.1 secures a
 * {@code CONTROLLER:SSL} listener: the key and trust stores are loaded by the broker's one SSL store loader
 * ({@link SslEngineFactory#create}, JKS, PKCS12 or PEM, files or inline), {@code ssl.client.auth=required} makes it
 * mutual TLS, and an empty {@code ssl.endpoint.identification.algorithm} turns the host name check off.
 *
 * <p>The quorum's transport (Apache Ratis over gRPC, whose TLS stack is BoringSSL through Netty) takes only key and
 * trust managers, so the keys that shape the JDK's SSL engines are not acted on for this listener;
 * {@link #notActedOn} names the ones set to something else than Kafka's default, for one line at startup.
 *
 * <p>Stateless, thread-safe.
 */
final class ControllerListenerTls {

    private static final Set<String> DEFAULT_PROTOCOLS = Set.of("TLSv1.2", "TLSv1.3");

    private ControllerListenerTls() {
    }

    /**
     * The quorum's TLS from the stores of {@code settings} already loaded as {@code managers}.
     *
     * @throws ConfigException naming the key whose value cannot be used
     */
    static QuorumTls quorumTls(SslSettings settings, SslEngineFactory.Managers managers) {
        X509KeyManager keyManager = null;
        for (KeyManager manager : managers.keyManagers()) {
            if (manager instanceof X509KeyManager x509) {
                keyManager = x509;
                break;
            }
        }
        if (keyManager == null) {
            throw ConfigException.invalid(settings.keyOf(SslSettings.KEYSTORE_LOCATION),
                    settings.get(SslSettings.KEYSTORE_LOCATION), "the key store of the SSL controller listener "
                    + settings.listenerName() + " has no X.509 key");
        }
        X509TrustManager trustManager = null;
        for (TrustManager manager : managers.trustManagers()) {
            if (manager instanceof X509TrustManager x509) {
                trustManager = x509;
                break;
            }
        }
        if (trustManager == null) {
            throw ConfigException.invalid(settings.keyOf(SslSettings.TRUSTMANAGER_ALGORITHM),
                    settings.get(SslSettings.TRUSTMANAGER_ALGORITHM), "the trust manager of the SSL controller "
                    + "listener " + settings.listenerName() + " does not check X.509 certificates");
        }
        return new QuorumTls(keyManager, trustManager, settings.clientAuth() == SslSettings.ClientAuth.REQUIRED,
                !settings.endpointIdentificationAlgorithm().isEmpty());
    }

    /**
     * The keys of {@code settings} (as the user wrote them, with their values) that the quorum's TLS does not act on
     * because they differ from Kafka's defaults; empty when there are none.
     */
    static List<String> notActedOn(SslSettings settings) {
        List<String> keys = new ArrayList<>();
        if (!"TLSv1.3".equals(settings.protocol())) {
            keys.add(settings.keyOf(SslSettings.PROTOCOL) + "=" + settings.protocol());
        }
        if (!new HashSet<>(settings.enabledProtocols()).equals(DEFAULT_PROTOCOLS)) {
            keys.add(settings.keyOf(SslSettings.ENABLED_PROTOCOLS) + "=" + String.join(",",
                    settings.enabledProtocols()));
        }
        if (!settings.cipherSuites().isEmpty()) {
            keys.add(settings.keyOf(SslSettings.CIPHER_SUITES) + "=" + String.join(",", settings.cipherSuites()));
        }
        for (String key : Arrays.asList(SslSettings.PROVIDER, SslSettings.SECURE_RANDOM_IMPLEMENTATION)) {
            if (settings.get(key) != null) {
                keys.add(settings.keyOf(key) + "=" + settings.get(key));
            }
        }
        if (!"DEFAULT".equals(settings.principalMappingRules().trim())) {
            keys.add(settings.keyOf(SslSettings.PRINCIPAL_MAPPING_RULES) + " (no principal is derived on the quorum's "
                    + "links)");
        }
        String identification = settings.endpointIdentificationAlgorithm();
        if (!identification.isEmpty() && !"https".equalsIgnoreCase(identification)) {
            keys.add(settings.keyOf(SslSettings.ENDPOINT_IDENTIFICATION_ALGORITHM) + "=" + identification
                    + " (gRPC checks host names by the HTTPS rules)");
        }
        return keys;
    }
}
