package io.cairn.broker.config;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One entry of {@code listeners} or {@code advertised.listeners}: {@code NAME://host:port} (Kafka's
 * {@code Endpoint}). An empty host means "every interface"; IPv6 hosts are written in brackets.
 *
 * @param listenerName the listener name, upper case (Kafka normalises it)
 * @param host the host as written, without brackets; empty for the wildcard
 * @param port the port, 0 for an ephemeral one
 * @param securityProtocol the protocol the name maps to in {@code listener.security.protocol.map}
 */
public record Endpoint(String listenerName, String host, int port, SecurityProtocol securityProtocol) {

    /** Kafka's listener syntax: a name, {@code ://}, an optional host (bracketed for IPv6) and a port. */
    private static final Pattern LISTENER = Pattern.compile("^([A-Za-z0-9_\\-]+)://(\\[[0-9a-fA-F:.%\\w]+]|[^:\\[\\]]*)"
            + ":([^:]*)$");

    /** Parses one listener; {@code protocolMap} resolves the name to a protocol. */
    static Endpoint parse(String key, String text, ListenerProtocols protocolMap) {
        Matcher matcher = LISTENER.matcher(text.trim());
        if (!matcher.matches()) {
            throw ConfigException.invalid(key, text, "listener must be NAME://host:port, e.g. PLAINTEXT://:9092");
        }
        String name = matcher.group(1).toUpperCase(Locale.ROOT);
        String host = matcher.group(2);
        if (host.startsWith("[")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(matcher.group(3));
        } catch (NumberFormatException e) {
            throw ConfigException.invalid(key, text, "port '" + matcher.group(3) + "' is not a number");
        }
        if (port < 0 || port > 65535) {
            throw ConfigException.invalid(key, text, "port must be between 0 and 65535");
        }
        return new Endpoint(name, host, port, protocolMap.protocolOf(key, name));
    }

    /** True when the host binds every interface: empty, {@code 0.0.0.0} or {@code ::}. */
    public boolean wildcardHost() {
        return host.isEmpty() || "0.0.0.0".equals(host) || "::".equals(host) || "0:0:0:0:0:0:0:0".equals(host);
    }

    @Override
    public String toString() {
        String shownHost = host.indexOf(':') >= 0 ? "[" + host + "]" : host;
        return listenerName + "://" + shownHost + ":" + port;
    }
}
