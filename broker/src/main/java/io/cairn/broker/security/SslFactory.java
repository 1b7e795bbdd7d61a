package io.cairn.broker.security;

import io.cairn.broker.config.ConfigException;
import io.cairn.broker.config.SslSettings;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import javax.net.ssl.SSLException;
import javax.security.auth.x500.X500Principal;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The TLS engines of one SSL listener, whose key and trust stores can be replaced while it serves (Kafka's
 * {@code SslFactory} over its engine factory): new connections take their engine from {@link #current()}, so a
 * connection keeps the context it was accepted with. A replacement is built from the listener's new settings, or
 * from the same settings when a store file was modified in place, and must pass Kafka's checks first: a listener
 * without a key store cannot get one and one with a key store cannot lose it; a listener checking peers with the
 * JVM's certificates cannot get a trust store; and each certificate of the new key store keeps the distinguished name
 * ({@code ssl.allow.dn.changes}) and every subject alternative name ({@code ssl.allow.san.changes}) of the one in the
 * same place of the old key store, unless the listener allows it; on the inter-broker listener the new stores must
 * also complete TLS handshakes with the old ones, both ways ({@link SslEngineValidator}), so brokers still on the
 * old ones keep replicating. The refusals are Kafka's texts.
 *
 * <p>Thread-safe: {@link #current()} is a volatile read; {@link #reconfigure} is serialised on this object.
 */
public final class SslFactory {

    private static final Logger LOGGER = LogManager.getLogger(SslFactory.class);
    /** The prefix Kafka's {@code SslFactory} gives each refusal, with its exception's class name. */
    private static final String FAILED = "Validation of dynamic config update of SSLFactory failed: ";
    private static final String CONFIG_EXCEPTION = "org.apache.kafka.common.config.ConfigException: ";

    /** Whether the listener is the inter-broker one, whose new stores must complete handshakes with the old. */
    private final boolean interBroker;
    /** Told of each replacement before new connections take it (the quorum's TLS follows the controller's). */
    private final Consumer<SslEngineFactory> replaced;
    /** Written by {@link #reconfigure} (under this object's monitor), read by every accepted connection. */
    private volatile SslEngineFactory current;

    /** A refused replacement; {@code getMessage()} is Kafka's text. */
    public static final class ReconfigurationException extends Exception {
        private static final long serialVersionUID = 1L;

        ReconfigurationException(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * @param initial     the engines the listener starts with
     * @param interBroker whether it is the inter-broker listener (Kafka's {@code keystoreVerifiableUsingTruststore}:
     *                    a replacement must complete TLS handshakes with the current stores both ways)
     */
    public SslFactory(SslEngineFactory initial, boolean interBroker) {
        this(initial, interBroker, replacement -> { });
    }

    /**
     * Engines whose replacements {@code replaced} also takes, before {@link #current()} gives them (it may refuse one
     * with a {@link ConfigException}, and the current engines stay): the controller listener's, whose stores the
     * metadata quorum's TLS uses.
     */
    public SslFactory(SslEngineFactory initial, boolean interBroker, Consumer<SslEngineFactory> replaced) {
        this.current = initial;
        this.interBroker = interBroker;
        this.replaced = replaced;
    }

    /** The engines new connections of the listener use. */
    public SslEngineFactory current() {
        return current;
    }

    /**
     * Kafka's {@code validateReconfiguration}: builds what {@code next} gives and checks it against the current
     * stores, without using it.
     *
     * @return the refusal as Kafka's {@code SslFactory} words it, or empty
     */
    public Optional<String> validateReconfiguration(SslSettings next) {
        try {
            replacement(next);
            return Optional.empty();
        } catch (ReconfigurationException e) {
            return Optional.of(e.getMessage());
        }
    }

    /**
     * Replaces the engines with those {@code next} gives, when {@code next} differs from the current settings or a
     * store file was modified since it was loaded; otherwise keeps them.
     *
     * @return whether the engines were replaced
     * @throws ReconfigurationException when the replacement fails Kafka's checks (the current engines stay)
     * @throws ConfigException when the replacement's other user refuses it (the current engines stay)
     */
    public synchronized boolean reconfigure(SslSettings next) throws ReconfigurationException {
        SslEngineFactory replacement = replacement(next);
        if (replacement == current) {
            return false;
        }
        replaced.accept(replacement);
        current = replacement;
        LOGGER.info("Created new SSL engines for listener {}: {}", next.listenerName(), replacement);
        return true;
    }

    /** Kafka's {@code createNewSslEngineFactory}: the current engines when nothing changed, else checked new ones. */
    private SslEngineFactory replacement(SslSettings next) throws ReconfigurationException {
        SslEngineFactory old = current;
        if (next.sameValues(old.settings()) && !old.storeFilesModified()) {
            return old;
        }
        SslEngineFactory candidate;
        try {
            candidate = SslEngineFactory.create(next);
        } catch (ConfigException e) {
            throw refused(e.getMessage());
        }
        if (old.keystore() == null) {
            if (candidate.keystore() != null) {
                throw refused("Cannot add SSL keystore to an existing listener for which no keystore was "
                        + "configured.");
            }
        } else {
            if (candidate.keystore() == null) {
                throw refused("Cannot remove the SSL keystore from an existing listener for which a keystore was "
                        + "configured.");
            }
            // as Kafka, the listener's own ssl.allow.*.changes decide (they are not reconfigurable)
            checkCompatible(candidate.keystore(), old.keystore(), old.settings().allowDnChanges(),
                    old.settings().allowSanChanges());
        }
        if (old.truststore() == null && candidate.truststore() != null) {
            throw refused("Cannot add SSL truststore to an existing listener for which no truststore was "
                    + "configured.");
        }
        if (interBroker && (old.truststore() != null || old.keystore() != null)) {
            try {
                SslEngineValidator.validate(old, candidate);
            } catch (SSLException e) {
                throw new ReconfigurationException(FAILED + e);
            }
        }
        return candidate;
    }

    /**
     * Kafka's {@code CertificateEntries.ensureCompatible}: the stores' certificates (key entries and trusted ones, in
     * the stores' alias order) pair up one to one, each new one with the old one's distinguished name (equal as
     * principals or as RFC 2253 text ignoring case) and a superset of its subject alternative names.
     */
    static void checkCompatible(KeyStore newStore, KeyStore oldStore, boolean allowDnChanges,
                                boolean allowSanChanges) throws ReconfigurationException {
        List<Entry> newEntries;
        List<Entry> oldEntries;
        try {
            newEntries = entries(newStore);
            oldEntries = entries(oldStore);
        } catch (GeneralSecurityException e) {
            throw new ReconfigurationException(FAILED + e);
        }
        if ((!allowDnChanges || !allowSanChanges) && newEntries.size() != oldEntries.size()) {
            throw refused(String.format("Keystore entries do not match, existing store contains %d entries, new "
                    + "store contains %d entries", oldEntries.size(), newEntries.size()));
        }
        if (!allowDnChanges) {
            for (int i = 0; i < newEntries.size(); i++) {
                Entry now = newEntries.get(i);
                Entry was = oldEntries.get(i);
                if (!now.subject().equals(was.subject())
                        && !now.subject().getName().equalsIgnoreCase(was.subject().getName())) {
                    // two spaces after the colon, as Kafka's format string has them
                    throw refused(String.format("Keystore DistinguishedName does not match:  existing={alias=%s, "
                            + "DN=%s}, new={alias=%s, DN=%s}", was.alias(), was.subject(), now.alias(),
                            now.subject()));
                }
            }
        }
        if (!allowSanChanges) {
            for (int i = 0; i < newEntries.size(); i++) {
                Entry now = newEntries.get(i);
                Entry was = oldEntries.get(i);
                if (!now.subjectAltNames().containsAll(was.subjectAltNames())) {
                    throw refused(String.format("Keystore SubjectAltNames do not match:  existing={alias=%s, "
                            + "SAN=%s}, new={alias=%s, SAN=%s}", was.alias(), was.subjectAltNames(), now.alias(),
                            now.subjectAltNames()));
                }
            }
        }
    }

    /** One X.509 certificate of a store: its alias, subject and subject alternative names (as the JDK lists them). */
    private record Entry(String alias, X500Principal subject, Set<List<?>> subjectAltNames) {
    }

    private static List<Entry> entries(KeyStore store) throws GeneralSecurityException {
        List<Entry> entries = new ArrayList<>();
        Enumeration<String> aliases = store.aliases();
        while (aliases.hasMoreElements()) {
            String alias = aliases.nextElement();
            Certificate certificate = store.getCertificate(alias);
            if (certificate instanceof X509Certificate) {
                X509Certificate x509 = (X509Certificate) certificate;
                Collection<List<?>> names = x509.getSubjectAlternativeNames();
                entries.add(new Entry(alias, x509.getSubjectX500Principal(), names == null ? Set.of()
                        : new HashSet<>(names)));
            }
        }
        return entries;
    }

    /** Kafka's wording: its {@code ConfigException} inside the {@code SslFactory} refusal. */
    private static ReconfigurationException refused(String message) {
        return new ReconfigurationException(refusal(message));
    }

    /** The refusal of settings that cannot be used, {@code message} saying why. */
    static String refusal(String message) {
        return FAILED + CONFIG_EXCEPTION + message;
    }

    @Override
    public String toString() {
        return current.toString();
    }
}
