package io.cairn.metadata.image;

/**
 * Kafka's ACL permission types with their wire codes ({@code org.apache.kafka.common.acl.AclPermissionType}).
 * Immutable. {@code ANY} appears only in filters; {@code UNKNOWN} stands for any code Kafka does not define.
 */
public enum AclPermissionType {
    UNKNOWN(0), ANY(1), DENY(2), ALLOW(3);

    private static final AclPermissionType[] BY_CODE = values();

    private final byte code;

    AclPermissionType(int code) {
        this.code = (byte) code;
    }

    public byte code() {
        return code;
    }

    /** The permission type of {@code code}, {@link #UNKNOWN} for a code Kafka does not define. */
    public static AclPermissionType fromCode(byte code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : UNKNOWN;
    }
}
