package io.cairn.metadata.config;

/**
 * Kafka's config value types ({@code ConfigDef.Type}) with the ids DescribeConfigs v3+ reports
 * ({@code DescribeConfigsResponse.ConfigType}). Immutable.
 */
public enum ConfigType {
    BOOLEAN(1),
    STRING(2),
    INT(3),
    SHORT(4),
    LONG(5),
    DOUBLE(6),
    LIST(7),
    CLASS(8),
    PASSWORD(9);

    private final byte id;

    ConfigType(int id) {
        this.id = (byte) id;
    }

    /** The id in DescribeConfigs responses. */
    public byte id() {
        return id;
    }

    /** Whether the value is a number (INT, SHORT, LONG, DOUBLE). */
    public boolean numeric() {
        return this == INT || this == SHORT || this == LONG || this == DOUBLE;
    }
}
