package io.cairn.metadata.image;

/**
 * Kafka's ACL operations with their wire codes ({@code org.apache.kafka.common.acl.AclOperation}). Immutable.
 *
 * <p>{@code UNKNOWN} stands for any code Kafka does not define; {@code ANY} appears only in filters.
 */
public enum AclOperation {
    UNKNOWN(0), ANY(1), ALL(2), READ(3), WRITE(4), CREATE(5), DELETE(6), ALTER(7), DESCRIBE(8), CLUSTER_ACTION(9),
    DESCRIBE_CONFIGS(10), ALTER_CONFIGS(11), IDEMPOTENT_WRITE(12), CREATE_TOKENS(13), DESCRIBE_TOKENS(14),
    TWO_PHASE_COMMIT(15);

    private static final AclOperation[] BY_CODE = values();

    private final byte code;

    AclOperation(int code) {
        this.code = (byte) code;
    }

    public byte code() {
        return code;
    }

    /** The operation of {@code code}, {@link #UNKNOWN} for a code Kafka does not define. */
    public static AclOperation fromCode(byte code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : UNKNOWN;
    }
}
