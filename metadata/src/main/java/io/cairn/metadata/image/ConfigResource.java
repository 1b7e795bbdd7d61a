package io.cairn.metadata.image;

import java.util.Objects;

/**
 * The owner of a set of configs, with Kafka's ConfigResource.Type ids. Immutable, thread-safe.
 *
 * @param type the resource type ({@link #TOPIC} or {@link #BROKER})
 * @param name the topic name, the broker id, or "" for the cluster-wide broker default
 */
public record ConfigResource(byte type, String name) {

    /** Kafka's ConfigResource.Type.TOPIC id. */
    public static final byte TOPIC = 2;
    /** Kafka's ConfigResource.Type.BROKER id. */
    public static final byte BROKER = 4;
    /** Kafka's ConfigResource.Type.GROUP id. */
    public static final byte GROUP = 32;

    public ConfigResource {
        Objects.requireNonNull(name, "name");
    }

    public static ConfigResource topic(String name) {
        return new ConfigResource(TOPIC, name);
    }

    public static ConfigResource broker(String name) {
        return new ConfigResource(BROKER, name);
    }
}
