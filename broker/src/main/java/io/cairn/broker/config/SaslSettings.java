package io.cairn.broker.config;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The SASL settings of one SASL_PLAINTEXT or SASL_SSL listener, resolved from Kafka's keys as Kafka resolves them:
 * {@code sasl.enabled.mechanisms} (a {@code listener.name.<listener>.} prefixed value wins; Kafka's default is
 * GSSAPI), each mechanism's JAAS login module from {@code listener.name.<listener>.<mechanism>.sasl.jaas.config}
 * (or the unprefixed {@code <mechanism>.sasl.jaas.config}; a bare {@code sasl.jaas.config} is ignored on a broker
 * listener, as Kafka's {@code JaasContext.loadServerContext} ignores it), {@code sasl.server.max.receive.size} and
 * {@code connection.failed.authentication.delay.ms}, and each mechanism's {@code connections.max.reauth.ms} (KIP-368:
 * {@code listener.name.<listener>.<mechanism>.connections.max.reauth.ms}, else
 * {@code listener.name.<listener>.connections.max.reauth.ms}, else {@code connections.max.reauth.ms}, default 0, as
 * Kafka's {@code SaslChannelBuilder} resolves it; 0 or less disables re-authentication).
 *
 * <p>Cairn serves PLAIN and SCRAM-SHA-256/512 (SCRAM users are the credentials in the metadata quorum, as in KRaft;
 * the JAAS module, {@code ScramLoginModule}, is still required on the listener as Kafka requires it, and its
 * {@code username}/{@code password} options are the broker's own when SCRAM is the inter-broker mechanism);
 * OAUTHBEARER validates tokens as {@link OAuthBearerSettings} says (a server callback handler must be named);
 * GSSAPI (Kerberos) is refused at startup, and there is no static JAAS file
 * ({@code java.security.auth.login.config}): the login module of every enabled mechanism must come from a
 * {@code sasl.jaas.config} key. Immutable and thread-safe.
 *
 * @param listenerName the listener
 * @param enabledMechanisms the mechanisms offered, in the configured order (the SaslHandshake response lists them)
 * @param jaas the login module of each enabled mechanism
 * @param maxReceiveSize the largest frame read before authentication completes
 * @param failedAuthenticationDelayMs how long a failed authentication waits before its response and close
 * @param maxReauthMs each enabled mechanism's {@code connections.max.reauth.ms} (absent: 0)
 * @param oauthBearer how OAUTHBEARER tokens are validated, or null when OAUTHBEARER is not enabled
 */
public record SaslSettings(String listenerName, List<String> enabledMechanisms, Map<String, JaasConfig> jaas,
        int maxReceiveSize, int failedAuthenticationDelayMs, Map<String, Long> maxReauthMs,
        OAuthBearerSettings oauthBearer) {

    public static final String ENABLED_MECHANISMS = "sasl.enabled.mechanisms";
    public static final String JAAS_CONFIG = "sasl.jaas.config";
    public static final String MAX_RECEIVE_SIZE = "sasl.server.max.receive.size";
    public static final String FAILED_AUTHENTICATION_DELAY_MS = "connection.failed.authentication.delay.ms";
    public static final String CONNECTIONS_MAX_REAUTH_MS = "connections.max.reauth.ms";
    public static final String MECHANISM_INTER_BROKER_PROTOCOL = "sasl.mechanism.inter.broker.protocol";
    public static final String PLAIN = "PLAIN";
    public static final String SCRAM_SHA_256 = "SCRAM-SHA-256";
    public static final String SCRAM_SHA_512 = "SCRAM-SHA-512";
    public static final String OAUTHBEARER = OAuthBearerSettings.MECHANISM;
    /** The mechanisms Cairn implements. */
    public static final List<String> SUPPORTED = List.of(PLAIN, SCRAM_SHA_256, SCRAM_SHA_512, OAUTHBEARER);
    private static final int DEFAULT_MAX_RECEIVE_SIZE = 524288;
    private static final int DEFAULT_FAILED_AUTHENTICATION_DELAY_MS = 100;

    /** Settings without re-authentication ({@code connections.max.reauth.ms} 0 for every mechanism) nor OAUTHBEARER. */
    public SaslSettings(String listenerName, List<String> enabledMechanisms, Map<String, JaasConfig> jaas,
            int maxReceiveSize, int failedAuthenticationDelayMs) {
        this(listenerName, enabledMechanisms, jaas, maxReceiveSize, failedAuthenticationDelayMs, Map.of(), null);
    }

    /**
     * Resolves the settings of SASL listener {@code listenerName}.
     *
     * @throws ConfigException naming the key when a mechanism is not served or its JAAS config is missing or bad
     */
    public static SaslSettings forListener(Map<String, String> props, String listenerName) {
        String prefix = SslSettings.listenerPrefix(listenerName);
        String mechanismsKey = props.containsKey(prefix + ENABLED_MECHANISMS) ? prefix + ENABLED_MECHANISMS
                : ENABLED_MECHANISMS;
        String mechanismsValue = props.getOrDefault(mechanismsKey, "GSSAPI");
        List<String> mechanisms = new ArrayList<>();
        for (String entry : mechanismsValue.split(",")) {
            String mechanism = entry.trim();
            if (!mechanism.isEmpty() && !mechanisms.contains(mechanism)) {
                mechanisms.add(mechanism);
            }
        }
        if (mechanisms.isEmpty()) {
            throw ConfigException.invalid(mechanismsKey, mechanismsValue, "the SASL listener " + listenerName
                    + " needs at least one mechanism (Cairn serves " + String.join(", ", SUPPORTED) + ")");
        }
        Map<String, JaasConfig> jaas = new LinkedHashMap<>();
        Map<String, Long> maxReauthMs = new LinkedHashMap<>();
        for (String mechanism : mechanisms) {
            if (!SUPPORTED.contains(mechanism)) {
                throw ConfigException.invalid(mechanismsKey, mechanismsValue, "the SASL listener " + listenerName
                        + " enables " + mechanism + ", which Cairn does not support" + why(mechanism)
                        + " (Cairn serves " + String.join(", ", SUPPORTED) + "; Kafka's default is GSSAPI, so set "
                        + ENABLED_MECHANISMS + ")");
            }
            jaas.put(mechanism, jaasOf(props, prefix, listenerName, mechanism));
            maxReauthMs.put(mechanism, maxReauthMsOf(props, prefix, mechanism));
        }
        int maxReceiveSize = intOf(props, prefix, MAX_RECEIVE_SIZE, DEFAULT_MAX_RECEIVE_SIZE, 1);
        int delay = intOf(props, prefix, FAILED_AUTHENTICATION_DELAY_MS, DEFAULT_FAILED_AUTHENTICATION_DELAY_MS, 0);
        OAuthBearerSettings oauthBearer = jaas.containsKey(OAUTHBEARER)
                ? OAuthBearerSettings.forListener(props, listenerName, jaas.get(OAUTHBEARER)) : null;
        return new SaslSettings(listenerName, List.copyOf(mechanisms), Collections.unmodifiableMap(jaas),
                maxReceiveSize, delay, Collections.unmodifiableMap(maxReauthMs), oauthBearer);
    }

    /**
     * Whether {@code key} is one of a listener's SASL keys that a dynamic broker config changes live (per broker):
     * {@code listener.name.<l>.sasl.enabled.mechanisms}, {@code listener.name.<l>.sasl.server.max.receive.size},
     * {@code listener.name.<l>.connections.max.reauth.ms}, and a mechanism's
     * {@code listener.name.<l>.<mechanism>.sasl.jaas.config} or {@code .connections.max.reauth.ms}.
     */
    public static boolean isListenerKey(String key) {
        String prefix = "listener.name.";
        int dot = key.startsWith(prefix) ? key.indexOf('.', prefix.length()) : -1;
        if (dot <= prefix.length()) {
            return false;
        }
        String rest = key.substring(dot + 1);
        if (rest.equals(ENABLED_MECHANISMS) || rest.equals(MAX_RECEIVE_SIZE)
                || rest.equals(CONNECTIONS_MAX_REAUTH_MS)) {
            return true;
        }
        int mechanismDot = rest.indexOf('.');
        if (mechanismDot <= 0) {
            return false;
        }
        String base = rest.substring(mechanismDot + 1);
        return base.equals(JAAS_CONFIG) || base.equals(CONNECTIONS_MAX_REAUTH_MS);
    }

    /**
     * {@code connections.max.reauth.ms} of one mechanism, looked up as Kafka's {@code SaslChannelBuilder} does on the
     * listener's prefix-overridden configs; a LONG without bounds (Kafka validates none: 0 or less disables it).
     */
    private static long maxReauthMsOf(Map<String, String> props, String prefix, String mechanism) {
        String key = prefix + mechanism.toLowerCase(Locale.ROOT) + "." + CONNECTIONS_MAX_REAUTH_MS;
        if (!props.containsKey(key)) {
            key = props.containsKey(prefix + CONNECTIONS_MAX_REAUTH_MS) ? prefix + CONNECTIONS_MAX_REAUTH_MS
                    : CONNECTIONS_MAX_REAUTH_MS;
        }
        String value = props.get(key);
        if (value == null || value.isBlank()) {
            return 0L;
        }
        try {
            return Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw ConfigException.invalid(key, value, "not a number");
        }
    }

    /**
     * The session lifetime {@code mechanism} grants (KIP-368): {@code connections.max.reauth.ms}, or 0 when
     * re-authentication is disabled for it.
     */
    public long maxReauthMs(String mechanism) {
        return Math.max(0L, maxReauthMs.getOrDefault(mechanism, 0L));
    }

    private static String why(String mechanism) {
        return switch (mechanism) {
            case "GSSAPI" -> " (Kerberos is not implemented)";
            default -> "";
        };
    }

    private static JaasConfig jaasOf(Map<String, String> props, String prefix, String listenerName,
            String mechanism) {
        String key = prefix + mechanism.toLowerCase(Locale.ROOT) + "." + JAAS_CONFIG;
        String value = props.get(key);
        if (value == null) {
            String unprefixed = mechanism.toLowerCase(Locale.ROOT) + "." + JAAS_CONFIG;
            if (props.get(unprefixed) != null) {
                key = unprefixed;
                value = props.get(unprefixed);
            }
        }
        if (value == null || value.isBlank()) {
            throw ConfigException.invalid(key, null, "the SASL listener " + listenerName + " enables " + mechanism
                    + " but has no JAAS login module for it: set " + key + " (Cairn reads no static JAAS file"
                    + (props.containsKey(JAAS_CONFIG) ? ", and like Kafka ignores an unprefixed " + JAAS_CONFIG
                    + " on a broker listener" : "") + ")");
        }
        try {
            return JaasConfig.parse(value);
        } catch (IllegalArgumentException e) {
            throw ConfigException.invalid(key, "[hidden]", e.getMessage());
        }
    }

    private static int intOf(Map<String, String> props, String prefix, String key, int defaultValue, int min) {
        String from = props.containsKey(prefix + key) ? prefix + key : key;
        String value = props.get(from);
        if (value == null || value.isBlank()) {
            return defaultValue;
        }
        try {
            int parsed = Integer.parseInt(value.trim());
            if (parsed < min) {
                throw ConfigException.invalid(from, value, "must be at least " + min);
            }
            return parsed;
        } catch (NumberFormatException e) {
            throw ConfigException.invalid(from, value, "not a number");
        }
    }

    /**
     * How this broker authenticates to the inter-broker listener {@code listener} (null: not a SASL listener):
     * with {@code sasl.mechanism.inter.broker.protocol} (Kafka's default GSSAPI; it must be one of the listener's
     * enabled mechanisms, Kafka's rule) and the {@code username} and {@code password} options of that mechanism's
     * JAAS login module on the listener, as Kafka's inter-broker client takes them.
     */
    public static ClientCredentials interBrokerClient(Map<String, String> props, SaslSettings listener) {
        if (listener == null) {
            return null;
        }
        String mechanism = props.getOrDefault(MECHANISM_INTER_BROKER_PROTOCOL, "GSSAPI").trim();
        return client(props, listener, mechanism, MECHANISM_INTER_BROKER_PROTOCOL);
    }

    /**
     * How this node authenticates to {@code listener} with {@code mechanism} (the value of {@code mechanismKey}): the
     * {@code username} and {@code password} options of that mechanism's JAAS login module on the listener.
     */
    static ClientCredentials client(Map<String, String> props, SaslSettings listener, String mechanism,
            String mechanismKey) {
        String use = mechanismKey.equals(MECHANISM_INTER_BROKER_PROTOCOL) ? "inter-broker" : "controller";
        if (mechanism.equals(OAUTHBEARER)) {
            throw ConfigException.invalid(mechanismKey, mechanism, "Cairn serves OAUTHBEARER to "
                    + "clients but its brokers cannot authenticate to each other with it (they have no token source):"
                    + " use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 on the inter-broker listener "
                    + listener.listenerName());
        }
        if (!listener.enabledMechanisms().contains(mechanism)) {
            throw ConfigException.invalid(mechanismKey, mechanism, mechanismKey
                    + " must be included in " + ENABLED_MECHANISMS + " when SASL is used for " + use
                    + " communication (listener " + listener.listenerName() + " enables "
                    + String.join(",", listener.enabledMechanisms()) + ")");
        }
        JaasConfig jaas = listener.jaasOf(mechanism);
        String username = jaas.option("username");
        String password = jaas.option("password");
        if (username == null || password == null) {
            throw ConfigException.invalid(SslSettings.listenerPrefix(listener.listenerName())
                    + mechanism.toLowerCase(Locale.ROOT) + "." + JAAS_CONFIG, "[hidden]", "the " + use + " listener "
                    + listener.listenerName() + " needs the broker's own username and password options in its "
                    + mechanism + " login module");
        }
        return new ClientCredentials(listener.listenerName(), mechanism, username, password);
    }

    /**
     * What an inter-broker client authenticates with.
     *
     * @param listenerName the inter-broker listener
     * @param mechanism the SASL mechanism
     * @param username the broker's user
     * @param password its password (never printed)
     */
    public record ClientCredentials(String listenerName, String mechanism, String username, String password) {

        @Override
        public String toString() {
            return mechanism + " as " + username + " to listener " + listenerName;
        }
    }

    /** The JAAS login module of {@code mechanism}, or null when it is not enabled. */
    public JaasConfig jaasOf(String mechanism) {
        return jaas.get(mechanism);
    }

    /** Never prints the JAAS options (they hold passwords). */
    @Override
    public String toString() {
        return "SASL mechanisms " + enabledMechanisms + ", sasl.server.max.receive.size=" + maxReceiveSize
                + ", connection.failed.authentication.delay.ms=" + failedAuthenticationDelayMs
                + ", connections.max.reauth.ms=" + maxReauthMs
                + (oauthBearer == null ? "" : ", OAUTHBEARER " + oauthBearer);
    }
}
