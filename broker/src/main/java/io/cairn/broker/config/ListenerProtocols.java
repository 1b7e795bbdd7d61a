package io.cairn.broker.config;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code listener.security.protocol.map}: listener name to security protocol. When the key is not set, Kafka's
 * default map applies and the names in {@code controller.listener.names} map to PLAINTEXT (Kafka's KRaft rule).
 *
 * <p>Immutable and thread-safe.
 */
final class ListenerProtocols {

    static final String KEY = "listener.security.protocol.map";
    static final String DEFAULT = "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL";

    private final Map<String, SecurityProtocol> protocols;

    private ListenerProtocols(Map<String, SecurityProtocol> protocols) {
        this.protocols = protocols;
    }

    static ListenerProtocols parse(String value, boolean explicit, List<String> controllerListenerNames) {
        Map<String, SecurityProtocol> protocols = new LinkedHashMap<>();
        for (String entry : value.split(",")) {
            if (entry.isBlank()) {
                continue;
            }
            int colon = entry.indexOf(':');
            if (colon <= 0 || colon == entry.length() - 1) {
                throw ConfigException.invalid(KEY, value, "entries must be NAME:PROTOCOL, e.g. PLAINTEXT:PLAINTEXT");
            }
            String name = entry.substring(0, colon).trim().toUpperCase(Locale.ROOT);
            protocols.put(name, SecurityProtocol.parse(KEY, entry.substring(colon + 1)));
        }
        if (!explicit) {
            for (String controller : controllerListenerNames) {
                protocols.putIfAbsent(controller.toUpperCase(Locale.ROOT), SecurityProtocol.PLAINTEXT);
            }
        }
        return new ListenerProtocols(Map.copyOf(protocols));
    }

    /** The protocol {@code listenerName} maps to, or null when the map does not name it. */
    SecurityProtocol find(String listenerName) {
        return protocols.get(listenerName);
    }

    SecurityProtocol protocolOf(String key, String listenerName) {
        SecurityProtocol protocol = protocols.get(listenerName);
        if (protocol == null) {
            throw ConfigException.invalid(key, listenerName, "no security protocol defined for listener "
                    + listenerName + " in " + KEY);
        }
        return protocol;
    }
}
