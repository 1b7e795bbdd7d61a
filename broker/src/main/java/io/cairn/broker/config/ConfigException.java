package io.cairn.broker.config;

/**
 * A {@code server.properties} value that Cairn cannot start with (Kafka's {@code ConfigException}): the message names
 * the key, the value and what was expected, so that the startup failure is one readable line.
 *
 * <p>Immutable and thread-safe.
 */
public final class ConfigException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public ConfigException(String message) {
        super(message);
    }

    /** Kafka's wording: {@code Invalid value X for configuration k: reason}. */
    public static ConfigException invalid(String key, Object value, String reason) {
        return new ConfigException("Invalid value " + value + " for configuration " + key + ": " + reason);
    }
}
