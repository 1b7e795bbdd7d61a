package io.cairn.metadata.image;

/**
 * Kafka's resource types of ACLs with their wire codes ({@code org.apache.kafka.common.resource.ResourceType}).
 * Immutable. {@code UNKNOWN} stands for any code Kafka does not define; {@code ANY} appears only in filters.
 */
public enum AclResourceType {
    UNKNOWN(0), ANY(1), TOPIC(2), GROUP(3), CLUSTER(4), TRANSACTIONAL_ID(5), DELEGATION_TOKEN(6), USER(7);

    /** The only name a CLUSTER resource has ({@code kafka-cluster}). */
    public static final String CLUSTER_NAME = "kafka-cluster";

    private static final AclResourceType[] BY_CODE = values();

    private final byte code;

    AclResourceType(int code) {
        this.code = (byte) code;
    }

    public byte code() {
        return code;
    }

    /** The type of {@code code}, {@link #UNKNOWN} for a code Kafka does not define. */
    public static AclResourceType fromCode(byte code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : UNKNOWN;
    }
}
