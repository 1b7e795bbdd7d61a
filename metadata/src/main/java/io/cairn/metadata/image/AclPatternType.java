package io.cairn.metadata.image;

/**
 * Kafka's resource pattern types with their wire codes ({@code org.apache.kafka.common.resource.PatternType}).
 * Immutable. An ACL is {@code LITERAL} (the name, or {@code *} for every name) or {@code PREFIXED}; {@code ANY} and
 * {@code MATCH} appear only in filters; {@code UNKNOWN} stands for any code Kafka does not define.
 */
public enum AclPatternType {
    UNKNOWN(0), ANY(1), MATCH(2), LITERAL(3), PREFIXED(4);

    private static final AclPatternType[] BY_CODE = values();

    private final byte code;

    AclPatternType(int code) {
        this.code = (byte) code;
    }

    public byte code() {
        return code;
    }

    /** The pattern type of {@code code}, {@link #UNKNOWN} for a code Kafka does not define. */
    public static AclPatternType fromCode(byte code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : UNKNOWN;
    }
}
