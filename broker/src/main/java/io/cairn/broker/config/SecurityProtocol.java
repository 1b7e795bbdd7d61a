package io.cairn.broker.config;

import java.util.Locale;

/**
 * The security protocols a listener can map to in {@code listener.security.protocol.map} (Kafka's names).
 *
 * <p>Immutable and thread-safe.
 */
public enum SecurityProtocol {
    PLAINTEXT,
    SSL,
    SASL_PLAINTEXT,
    SASL_SSL;

    /** Parses a protocol name case-insensitively; throws {@link ConfigException} naming {@code key} otherwise. */
    static SecurityProtocol parse(String key, String name) {
        try {
            return valueOf(name.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw ConfigException.invalid(key, name, "unknown security protocol (expected one of PLAINTEXT, SSL, "
                    + "SASL_PLAINTEXT, SASL_SSL)");
        }
    }
}
