package io.cairn.broker.config;

import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The {@code ssl.*} settings of one listener, resolved as Kafka resolves a listener's configs: each key
 * {@code listener.name.<listener name in lower case>.ssl.…} wins over the global {@code ssl.…} key of the same
 * name,
 * key by key, and a key set in neither takes Kafka's default ({@code ssl.protocol} TLSv1.3,
 * {@code ssl.enabled.protocols} TLSv1.2,TLSv1.3, store types JKS, {@code ssl.client.auth} none,
 * {@code ssl.endpoint.identification.algorithm} https, {@code ssl.principal.mapping.rules} DEFAULT). Every value
 * remembers the key it came from, so that a failure names the key the user wrote ({@link #keyOf}).
 *
 * <p>The presence rules between the store keys are checked here (Kafka's): a key store is a file with its password,
 * a PEM file, or a PEM key and certificate chain given inline; a PEM store takes no store password; a trust store is
 * a file (its password optional) or inline PEM certificates. Loading the stores is
 * {@code io.cairn.broker.security.SslEngineFactory}'s job. Immutable and thread-safe; passwords never appear in
 * {@link #toString()}.
 */
public final class SslSettings {

    public static final String KEYSTORE_TYPE = "ssl.keystore.type";
    public static final String KEYSTORE_LOCATION = "ssl.keystore.location";
    public static final String KEYSTORE_PASSWORD = "ssl.keystore.password";
    public static final String KEY_PASSWORD = "ssl.key.password";
    public static final String KEYSTORE_CERTIFICATE_CHAIN = "ssl.keystore.certificate.chain";
    public static final String KEYSTORE_KEY = "ssl.keystore.key";
    public static final String TRUSTSTORE_TYPE = "ssl.truststore.type";
    public static final String TRUSTSTORE_LOCATION = "ssl.truststore.location";
    public static final String TRUSTSTORE_PASSWORD = "ssl.truststore.password";
    public static final String TRUSTSTORE_CERTIFICATES = "ssl.truststore.certificates";
    public static final String PROTOCOL = "ssl.protocol";
    public static final String ENABLED_PROTOCOLS = "ssl.enabled.protocols";
    public static final String CIPHER_SUITES = "ssl.cipher.suites";
    public static final String CLIENT_AUTH = "ssl.client.auth";
    public static final String ENDPOINT_IDENTIFICATION_ALGORITHM = "ssl.endpoint.identification.algorithm";
    public static final String KEYMANAGER_ALGORITHM = "ssl.keymanager.algorithm";
    public static final String TRUSTMANAGER_ALGORITHM = "ssl.trustmanager.algorithm";
    public static final String PROVIDER = "ssl.provider";
    public static final String SECURE_RANDOM_IMPLEMENTATION = "ssl.secure.random.implementation";
    public static final String PRINCIPAL_MAPPING_RULES = "ssl.principal.mapping.rules";
    public static final String ENGINE_FACTORY_CLASS = "ssl.engine.factory.class";
    /** Whether a reloaded key store may carry certificates with other distinguished names (Kafka's, false). */
    public static final String ALLOW_DN_CHANGES = "ssl.allow.dn.changes";
    /** Whether a reloaded key store may drop subject alternative names (Kafka's, false). */
    public static final String ALLOW_SAN_CHANGES = "ssl.allow.san.changes";
    /** Kafka's store type whose stores are PEM text. */
    public static final String PEM = "PEM";

    /** The keys this class resolves, with Kafka's defaults (null: no default). */
    private static final Map<String, String> DEFAULTS = defaults();

    /**
     * The keys a listener's stores can be changed with at run time, per broker and with the listener prefix (Kafka's
     * {@code SslConfigs.RECONFIGURABLE_CONFIGS}); the other {@code ssl.*} keys apply from the start.
     */
    public static final Set<String> RECONFIGURABLE = Set.of(KEYSTORE_TYPE, KEYSTORE_LOCATION, KEYSTORE_PASSWORD,
            KEY_PASSWORD, TRUSTSTORE_TYPE, TRUSTSTORE_LOCATION, TRUSTSTORE_PASSWORD, KEYSTORE_CERTIFICATE_CHAIN,
            KEYSTORE_KEY, TRUSTSTORE_CERTIFICATES);

    /** {@code ssl.client.auth}: whether the server asks for, or insists on, a client certificate. */
    public enum ClientAuth {
        NONE,
        REQUESTED,
        REQUIRED
    }

    private final String listenerName;
    private final Map<String, String> values;
    private final Map<String, String> keys;

    private SslSettings(String listenerName, Map<String, String> values, Map<String, String> keys) {
        this.listenerName = listenerName;
        this.values = values;
        this.keys = keys;
    }

    private static Map<String, String> defaults() {
        Map<String, String> defaults = new HashMap<>();
        for (String key : List.of(KEYSTORE_LOCATION, KEYSTORE_PASSWORD, KEY_PASSWORD, KEYSTORE_CERTIFICATE_CHAIN,
                KEYSTORE_KEY, TRUSTSTORE_LOCATION, TRUSTSTORE_PASSWORD, TRUSTSTORE_CERTIFICATES, CIPHER_SUITES,
                KEYMANAGER_ALGORITHM, TRUSTMANAGER_ALGORITHM, PROVIDER, SECURE_RANDOM_IMPLEMENTATION,
                ENGINE_FACTORY_CLASS)) {
            defaults.put(key, null);
        }
        defaults.put(KEYSTORE_TYPE, "JKS");
        defaults.put(TRUSTSTORE_TYPE, "JKS");
        defaults.put(PROTOCOL, "TLSv1.3");
        defaults.put(ENABLED_PROTOCOLS, "TLSv1.2,TLSv1.3");
        defaults.put(CLIENT_AUTH, "none");
        defaults.put(ENDPOINT_IDENTIFICATION_ALGORITHM, "https");
        defaults.put(PRINCIPAL_MAPPING_RULES, "DEFAULT");
        defaults.put(ALLOW_DN_CHANGES, "false");
        defaults.put(ALLOW_SAN_CHANGES, "false");
        return Collections.unmodifiableMap(defaults);
    }

    /** Kafka's per-listener prefix: {@code listener.name.} and the listener name in lower case, then a dot. */
    public static String listenerPrefix(String listenerName) {
        return "listener.name." + listenerName.toLowerCase(Locale.ROOT) + ".";
    }

    /** True when {@code key} is one of the {@code ssl.*} keys resolved per listener. */
    public static boolean isSslKey(String key) {
        return DEFAULTS.containsKey(key);
    }

    /**
     * The settings of {@code listenerName} (upper case, as {@link Endpoint} holds it) from the raw properties;
     * throws {@link ConfigException} naming the key when a value or a combination of store keys is invalid.
     */
    public static SslSettings forListener(Map<String, String> props, String listenerName) {
        String prefix = listenerPrefix(listenerName);
        Map<String, String> values = new HashMap<>();
        Map<String, String> keys = new HashMap<>();
        for (Map.Entry<String, String> entry : DEFAULTS.entrySet()) {
            String key = entry.getKey();
            String value;
            String from;
            if (props.containsKey(prefix + key)) {
                from = prefix + key;
                value = props.get(from);
            } else if (props.containsKey(key)) {
                from = key;
                value = props.get(key);
            } else {
                from = key;
                value = entry.getValue();
            }
            // Kafka reads an empty password or location as set-but-empty; treat blank as unset except where an
            // empty value means something (an empty endpoint identification algorithm disables the check).
            if (value != null && value.isBlank() && !ENDPOINT_IDENTIFICATION_ALGORITHM.equals(key)) {
                value = null;
            }
            if (value != null && !isSecretOrPem(key)) {
                value = value.trim();
            }
            keys.put(key, from);
            if (value != null) {
                values.put(key, value);
            }
        }
        SslSettings settings = new SslSettings(listenerName, Map.copyOf(values), Map.copyOf(keys));
        settings.validate();
        return settings;
    }

    private static boolean isSecretOrPem(String key) {
        return KEYSTORE_PASSWORD.equals(key) || KEY_PASSWORD.equals(key) || TRUSTSTORE_PASSWORD.equals(key)
                || KEYSTORE_KEY.equals(key) || KEYSTORE_CERTIFICATE_CHAIN.equals(key)
                || TRUSTSTORE_CERTIFICATES.equals(key);
    }

    private void validate() {
        String clientAuth = get(CLIENT_AUTH);
        if (clientAuth == null || Arrays.stream(ClientAuth.values())
                .noneMatch(a -> a.name().toLowerCase(Locale.ROOT).equals(clientAuth))) {
            throw ConfigException.invalid(keyOf(CLIENT_AUTH), clientAuth, "String must be one of: required, "
                    + "requested, none");
        }
        if (get(ENGINE_FACTORY_CLASS) != null) {
            throw ConfigException.invalid(keyOf(ENGINE_FACTORY_CLASS), get(ENGINE_FACTORY_CLASS), "Cairn cannot "
                    + "load SSL engine factory plugins; leave it unset to use the built-in JDK TLS engine");
        }
        if (enabledProtocols().isEmpty()) {
            throw ConfigException.invalid(keyOf(ENABLED_PROTOCOLS), get(ENABLED_PROTOCOLS), "at least one protocol "
                    + "is required");
        }
        validateKeystore();
        validateTruststore();
    }

    /** Kafka's rules between the key store keys, each failure naming the key that is wrong. */
    private void validateKeystore() {
        boolean pem = PEM.equalsIgnoreCase(keystoreType());
        if (get(KEYSTORE_KEY) != null) {
            if (!pem) {
                throw ConfigException.invalid(keyOf(KEYSTORE_TYPE), keystoreType(), "an SSL private key ("
                        + keyOf(KEYSTORE_KEY) + ") can be given only for the PEM key store type");
            }
            if (get(KEYSTORE_CERTIFICATE_CHAIN) == null) {
                throw ConfigException.invalid(keyOf(KEYSTORE_CERTIFICATE_CHAIN), null, "the SSL private key is "
                        + "specified in " + keyOf(KEYSTORE_KEY) + ", but the certificate chain is not");
            }
            if (get(KEYSTORE_LOCATION) != null) {
                throw ConfigException.invalid(keyOf(KEYSTORE_LOCATION), get(KEYSTORE_LOCATION), "both a key store "
                        + "location and a separate private key (" + keyOf(KEYSTORE_KEY) + ") are specified");
            }
            if (get(KEYSTORE_PASSWORD) != null) {
                throw ConfigException.invalid(keyOf(KEYSTORE_PASSWORD), "[hidden]", "a key store password cannot "
                        + "be given with the PEM format, only the key password (" + keyOf(KEY_PASSWORD) + ")");
            }
        } else if (get(KEYSTORE_CERTIFICATE_CHAIN) != null) {
            throw ConfigException.invalid(keyOf(KEYSTORE_KEY), null, "the SSL certificate chain is specified in "
                    + keyOf(KEYSTORE_CERTIFICATE_CHAIN) + ", but the private key is not");
        } else if (pem && get(KEYSTORE_LOCATION) != null) {
            if (get(KEYSTORE_PASSWORD) != null) {
                throw ConfigException.invalid(keyOf(KEYSTORE_PASSWORD), "[hidden]", "a key store password cannot "
                        + "be given with the PEM format, only the key password (" + keyOf(KEY_PASSWORD) + ")");
            }
        } else if (get(KEYSTORE_LOCATION) == null && get(KEYSTORE_PASSWORD) != null) {
            throw ConfigException.invalid(keyOf(KEYSTORE_LOCATION), null, "the key store password is specified in "
                    + keyOf(KEYSTORE_PASSWORD) + ", but the key store is not");
        } else if (get(KEYSTORE_LOCATION) != null && get(KEYSTORE_PASSWORD) == null) {
            throw ConfigException.invalid(keyOf(KEYSTORE_PASSWORD), null, "the key store "
                    + get(KEYSTORE_LOCATION) + " is specified in " + keyOf(KEYSTORE_LOCATION)
                    + ", but its password is not");
        }
    }

    /** Kafka's rules between the trust store keys. */
    private void validateTruststore() {
        boolean pem = PEM.equalsIgnoreCase(truststoreType());
        if (get(TRUSTSTORE_CERTIFICATES) != null) {
            if (!pem) {
                throw ConfigException.invalid(keyOf(TRUSTSTORE_TYPE), truststoreType(), "trusted certificates ("
                        + keyOf(TRUSTSTORE_CERTIFICATES) + ") can be given only for the PEM trust store type");
            }
            if (get(TRUSTSTORE_LOCATION) != null) {
                throw ConfigException.invalid(keyOf(TRUSTSTORE_LOCATION), get(TRUSTSTORE_LOCATION), "both a trust "
                        + "store location and separate trusted certificates (" + keyOf(TRUSTSTORE_CERTIFICATES)
                        + ") are specified");
            }
        }
        if (pem && get(TRUSTSTORE_PASSWORD) != null) {
            throw ConfigException.invalid(keyOf(TRUSTSTORE_PASSWORD), "[hidden]", "a trust store password cannot "
                    + "be given with the PEM format");
        }
        if (!pem && get(TRUSTSTORE_LOCATION) == null && get(TRUSTSTORE_PASSWORD) != null) {
            throw ConfigException.invalid(keyOf(TRUSTSTORE_LOCATION), null, "the trust store password is specified "
                    + "in " + keyOf(TRUSTSTORE_PASSWORD) + ", but the trust store is not");
        }
    }

    /** The listener these settings are for (upper case). */
    public String listenerName() {
        return listenerName;
    }

    /** The value of {@code key} (a global {@code ssl.*} name) after the listener override, or null when unset. */
    public String get(String key) {
        return values.get(key);
    }

    /** The key the value of {@code key} came from: the listener-prefixed key when that was set, else the global. */
    public String keyOf(String key) {
        String from = keys.get(key);
        if (from == null) {
            throw new IllegalArgumentException(key + " is not an ssl key resolved per listener");
        }
        return from;
    }

    public String keystoreType() {
        return get(KEYSTORE_TYPE);
    }

    public String truststoreType() {
        return get(TRUSTSTORE_TYPE);
    }

    /** True when a key store is configured (a file, or inline PEM). */
    public boolean hasKeystore() {
        return get(KEYSTORE_LOCATION) != null || get(KEYSTORE_KEY) != null;
    }

    /** True when a trust store is configured; otherwise the JVM's default trusted certificates apply. */
    public boolean hasTruststore() {
        return get(TRUSTSTORE_LOCATION) != null || get(TRUSTSTORE_CERTIFICATES) != null;
    }

    public String protocol() {
        return get(PROTOCOL);
    }

    public List<String> enabledProtocols() {
        return list(ENABLED_PROTOCOLS);
    }

    /** {@code ssl.cipher.suites}; empty for the JVM's defaults. */
    public List<String> cipherSuites() {
        return list(CIPHER_SUITES);
    }

    public ClientAuth clientAuth() {
        return ClientAuth.valueOf(get(CLIENT_AUTH).toUpperCase(Locale.ROOT));
    }

    /** {@code ssl.endpoint.identification.algorithm}; empty disables the host name check of client connections. */
    public String endpointIdentificationAlgorithm() {
        String value = get(ENDPOINT_IDENTIFICATION_ALGORITHM);
        return value == null ? "" : value.trim();
    }

    public String principalMappingRules() {
        return get(PRINCIPAL_MAPPING_RULES);
    }

    /** {@code ssl.allow.dn.changes}: a reloaded key store may change its certificates' distinguished names. */
    public boolean allowDnChanges() {
        return Boolean.parseBoolean(get(ALLOW_DN_CHANGES));
    }

    /** {@code ssl.allow.san.changes}: a reloaded key store may drop subject alternative names. */
    public boolean allowSanChanges() {
        return Boolean.parseBoolean(get(ALLOW_SAN_CHANGES));
    }

    /** Whether {@code other} resolves every key to the same value (where the values came from aside). */
    public boolean sameValues(SslSettings other) {
        return listenerName.equals(other.listenerName) && values.equals(other.values);
    }

    private List<String> list(String key) {
        String value = get(key);
        if (value == null) {
            return List.of();
        }
        return Arrays.stream(value.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();
    }

    @Override
    public String toString() {
        return "SslSettings(listener " + listenerName + ", keystore " + (hasKeystore() ? keystoreType() + " "
                + (get(KEYSTORE_LOCATION) != null ? get(KEYSTORE_LOCATION) : "inline") : "none") + ", truststore "
                + (hasTruststore() ? truststoreType() + " " + (get(TRUSTSTORE_LOCATION) != null
                ? get(TRUSTSTORE_LOCATION) : "inline") : "JVM default") + ", protocol " + protocol() + ", enabled "
                + enabledProtocols() + ", client auth " + clientAuth().name().toLowerCase(Locale.ROOT) + ")";
    }
}
