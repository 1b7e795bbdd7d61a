package io.cairn.broker.config;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Kafka's connection limits as its {@code KafkaConfig} reads them: {@code max.connections} (the broker's),
 * {@code listener.name.<l>.max.connections} (a listener's), {@code max.connections.per.ip} and
 * {@code max.connections.per.ip.overrides} ({@code host:count,...}), and the connection creation rates of KIP-612:
 * {@code max.connection.creation.rate} (the broker's, new connections per second) and
 * {@code listener.name.<l>.max.connection.creation.rate} (a listener's). Immutable.
 *
 * @param maxConnections      the broker's limit over its listeners
 * @param maxConnectionsPerIp the limit per client address
 * @param perIpOverrides      the addresses with their own limit
 * @param perListener         the listeners with their own limit
 * @param maxConnectionCreationRate the broker's connection creation rate
 * @param perListenerCreationRate   the listeners with their own connection creation rate
 */
public record ConnectionLimits(int maxConnections, int maxConnectionsPerIp, Map<InetAddress, Integer> perIpOverrides,
                               Map<String, Integer> perListener, int maxConnectionCreationRate,
                               Map<String, Integer> perListenerCreationRate) {

    public static final String MAX_CONNECTIONS = "max.connections";
    public static final String MAX_CONNECTIONS_PER_IP = "max.connections.per.ip";
    public static final String MAX_CONNECTIONS_PER_IP_OVERRIDES = "max.connections.per.ip.overrides";
    public static final String MAX_CONNECTION_CREATION_RATE = "max.connection.creation.rate";
    /** The keys of this record besides the per-listener {@code listener.name.<l>.max.connections} and rate. */
    public static final List<String> KEYS = List.of(MAX_CONNECTIONS, MAX_CONNECTIONS_PER_IP,
            MAX_CONNECTIONS_PER_IP_OVERRIDES, MAX_CONNECTION_CREATION_RATE);
    /** The keys a listener may set for itself ({@code listener.name.<l>.<key>}). */
    private static final List<String> LISTENER_KEYS = List.of(MAX_CONNECTIONS, MAX_CONNECTION_CREATION_RATE);

    private static final String LISTENER_PREFIX = "listener.name.";
    /** Kafka's {@code Utils.validHostPattern}. */
    private static final Pattern VALID_HOST = Pattern.compile("[0-9a-zA-Z\\-%._:]*");

    public ConnectionLimits {
        perIpOverrides = Map.copyOf(perIpOverrides);
        perListener = Map.copyOf(perListener);
        perListenerCreationRate = Map.copyOf(perListenerCreationRate);
    }

    /** The connection counts alone, no creation rates. */
    public ConnectionLimits(int maxConnections, int maxConnectionsPerIp, Map<InetAddress, Integer> perIpOverrides,
                            Map<String, Integer> perListener) {
        this(maxConnections, maxConnectionsPerIp, perIpOverrides, perListener, Integer.MAX_VALUE, Map.of());
    }

    /** No limits: Kafka's defaults. */
    public static ConnectionLimits none() {
        return new ConnectionLimits(Integer.MAX_VALUE, Integer.MAX_VALUE, Map.of(), Map.of());
    }

    /** Whether {@code key} is one of these limits, a listener's {@code max.connections} included. */
    public static boolean isKey(String key) {
        return KEYS.contains(key) || isListenerKey(key);
    }

    /**
     * Whether {@code key} is {@code listener.name.<l>.max.connections} or
     * {@code listener.name.<l>.max.connection.creation.rate}.
     */
    public static boolean isListenerKey(String key) {
        return listenerBaseKey(key) != null;
    }

    /** The key a listener key sets for its listener ({@code max.connections} or the rate), null for another key. */
    public static String listenerBaseKey(String key) {
        if (!key.startsWith(LISTENER_PREFIX)) {
            return null;
        }
        for (String base : LISTENER_KEYS) {
            if (key.endsWith("." + base) && key.length() > LISTENER_PREFIX.length() + base.length() + 1
                    && key.indexOf('.', LISTENER_PREFIX.length()) == key.length() - base.length() - 1) {
                return base;
            }
        }
        return null;
    }

    /** The connection creation rate of {@code listener} (new connections per second). */
    public int creationRateForListener(String listener) {
        return perListenerCreationRate.getOrDefault(listener, Integer.MAX_VALUE);
    }

    /** The limit of connections from {@code address}. */
    public int forAddress(InetAddress address) {
        return perIpOverrides.getOrDefault(address, maxConnectionsPerIp);
    }

    /** The limit of connections on {@code listener}. */
    public int forListener(String listener) {
        return perListener.getOrDefault(listener, Integer.MAX_VALUE);
    }

    /**
     * The limits {@code props} set for {@code listeners}, checked as Kafka's {@code KafkaConfig} checks them.
     *
     * @throws IllegalArgumentException with Kafka's message when a value is refused
     */
    public static ConnectionLimits parse(Map<String, String> props, Collection<String> listeners) {
        int max = intAtLeastZero(props, MAX_CONNECTIONS);
        int perIp = intAtLeastZero(props, MAX_CONNECTIONS_PER_IP);
        Map<String, String> overrides = parseCsvMap(props.get(MAX_CONNECTIONS_PER_IP_OVERRIDES));
        if (perIp == 0 && overrides.isEmpty()) {
            throw new IllegalArgumentException("requirement failed: " + MAX_CONNECTIONS_PER_IP + " can be set to "
                    + "zero only if " + MAX_CONNECTIONS_PER_IP_OVERRIDES + " property is set.");
        }
        List<String> invalid = new ArrayList<>();
        overrides.keySet().stream().filter(host -> !VALID_HOST.matcher(host).matches()).forEach(invalid::add);
        if (!invalid.isEmpty()) {
            throw new IllegalArgumentException(MAX_CONNECTIONS_PER_IP_OVERRIDES + " contains invalid addresses : "
                    + String.join(",", invalid));
        }
        Map<InetAddress, Integer> byAddress = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : overrides.entrySet()) {
            int count;
            try {
                count = Integer.parseInt(e.getValue());
            } catch (NumberFormatException ex) {
                throw new IllegalArgumentException("For input string: \"" + e.getValue() + "\"");
            }
            try {
                byAddress.put(InetAddress.getByName(e.getKey()), count);
            } catch (UnknownHostException ex) {
                throw new IllegalArgumentException(MAX_CONNECTIONS_PER_IP_OVERRIDES + " contains an unknown host: "
                        + e.getKey());
            }
        }
        Map<String, Integer> perListener = new LinkedHashMap<>();
        Map<String, Integer> perListenerRate = new LinkedHashMap<>();
        for (String listener : listeners) {
            String prefix = LISTENER_PREFIX + listener.toLowerCase(java.util.Locale.ROOT) + ".";
            if (props.get(prefix + MAX_CONNECTIONS) != null) {
                perListener.put(listener, intAtLeastZero(props, prefix + MAX_CONNECTIONS));
            }
            if (props.get(prefix + MAX_CONNECTION_CREATION_RATE) != null) {
                perListenerRate.put(listener, intAtLeastZero(props, prefix + MAX_CONNECTION_CREATION_RATE));
            }
        }
        return new ConnectionLimits(max, perIp, byAddress, perListener,
                intAtLeastZero(props, MAX_CONNECTION_CREATION_RATE), perListenerRate);
    }

    /**
     * Kafka's check of a listener's changed {@code max.connections} or {@code max.connection.creation.rate}
     * ({@code ListenerConnectionQuota.validateReconfiguration}): the refusal's text, or null.
     */
    public static String checkListenerLimit(String key, String value) {
        try {
            int parsed = Integer.parseInt(value.trim());
            return parsed <= 0 ? "Invalid " + listenerBaseKey(key) + " " + parsed : null;
        } catch (NumberFormatException e) {
            return "Invalid value " + value + " for configuration " + key + ": Not a number of type INT";
        }
    }

    private static int intAtLeastZero(Map<String, String> props, String key) {
        String value = props.get(key);
        if (value == null || value.isBlank()) {
            return Integer.MAX_VALUE;
        }
        int parsed;
        try {
            parsed = Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("Invalid value " + value + " for configuration " + key
                    + ": Not a number of type INT");
        }
        if (parsed < 0) {
            throw new IllegalArgumentException("Invalid value " + parsed + " for configuration " + key
                    + ": Value must be at least 0");
        }
        return parsed;
    }

    /** Kafka's {@code Csv.parseCsvMap}: {@code k:v} entries split at the last colon (IPv6 addresses have colons). */
    private static Map<String, String> parseCsvMap(String value) {
        Map<String, String> map = new LinkedHashMap<>();
        if (value == null || value.isEmpty()) {
            return map;
        }
        for (String entry : value.split("\\s*,\\s*")) {
            int colon = entry.lastIndexOf(':');
            if (colon < 0) {
                throw new IllegalArgumentException("Error parsing configuration property '"
                        + MAX_CONNECTIONS_PER_IP_OVERRIDES + "': begin 0, end -1, length " + entry.length());
            }
            map.put(entry.substring(0, colon).trim(), entry.substring(colon + 1).trim());
        }
        return map;
    }
}
