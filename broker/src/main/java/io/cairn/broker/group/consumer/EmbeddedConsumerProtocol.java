package io.cairn.broker.group.consumer;

import io.cairn.wire.message.ConsumerProtocolAssignment;
import io.cairn.wire.message.ConsumerProtocolSubscription;
import io.cairn.wire.protocol.ByteBufAccessor;
import io.cairn.wire.protocol.SerializationCache;
import io.cairn.wire.protocol.SizeAccumulator;
import io.cairn.wire.protocol.Uuid;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Kafka's consumer embedded protocol (its {@code ConsumerProtocol}), the bytes a classic consumer puts in its
 * JoinGroup (a subscription) and gets back from SyncGroup (an assignment): an int16 version, then the message at
 * that version (versions 0-3; a newer version is read as the newest Cairn knows, as Kafka reads it). A consumer
 * group reads its classic members' subscriptions and writes their assignments with it; a conversion between group
 * types reads and writes both.
 *
 * <p>Thread-safety: stateless, thread-safe.
 */
public final class EmbeddedConsumerProtocol {

    /** The newest version of the subscription and the assignment. */
    static final short HIGHEST_VERSION = 3;

    private EmbeddedConsumerProtocol() {
    }

    /** The version of a serialized subscription or assignment, capped at the newest Cairn knows. */
    public static short version(byte[] bytes) {
        if (bytes == null || bytes.length < 2) {
            throw new IllegalArgumentException("The embedded consumer protocol has no version");
        }
        short version = (short) (((bytes[0] & 0xff) << 8) | (bytes[1] & 0xff));
        if (version < 0) {
            throw new IllegalArgumentException("The embedded consumer protocol has version " + version);
        }
        return (short) Math.min(version, HIGHEST_VERSION);
    }

    /**
     * Reads a subscription.
     *
     * @throws RuntimeException when the bytes are not one (Kafka's SchemaException)
     */
    public static ConsumerProtocolSubscription subscription(byte[] bytes) {
        short version = version(bytes);
        ByteBuf buf = Unpooled.wrappedBuffer(bytes, 2, bytes.length - 2);
        return new ConsumerProtocolSubscription(new ByteBufAccessor(buf), version);
    }

    /** Reads an assignment. */
    public static ConsumerProtocolAssignment assignment(byte[] bytes) {
        short version = version(bytes);
        ByteBuf buf = Unpooled.wrappedBuffer(bytes, 2, bytes.length - 2);
        return new ConsumerProtocolAssignment(new ByteBufAccessor(buf), version);
    }

    /** The partitions of an assignment by topic id; topics {@code topics} does not know are left out. */
    public static Map<Uuid, Set<Integer>> assignedPartitions(byte[] bytes, ConsumerGroupTopics topics) {
        Map<Uuid, Set<Integer>> partitions = new HashMap<>();
        if (bytes == null || bytes.length == 0) {
            return partitions;
        }
        for (ConsumerProtocolAssignment.TopicPartition tp : assignment(bytes).assignedPartitions()) {
            Uuid topicId = topics.topicId(tp.topic());
            if (topicId != null && !tp.partitions().isEmpty()) {
                partitions.computeIfAbsent(topicId, id -> new HashSet<>()).addAll(tp.partitions());
            }
        }
        return partitions;
    }

    /** The owned partitions a subscription reports (version 1 and later), by topic id; empty for none. */
    public static Map<Uuid, Set<Integer>> ownedPartitions(ConsumerProtocolSubscription subscription,
                                                          ConsumerGroupTopics topics) {
        Map<Uuid, Set<Integer>> owned = new HashMap<>();
        for (ConsumerProtocolSubscription.TopicPartition tp : subscription.ownedPartitions()) {
            Uuid topicId = topics.topicId(tp.topic());
            if (topicId != null) {
                owned.computeIfAbsent(topicId, id -> new HashSet<>()).addAll(tp.partitions());
            }
        }
        return owned;
    }

    /**
     * An assignment of {@code partitions} (by topic id; topics {@code topics} no longer knows are left out) written
     * at {@code version}, the version of the member's subscription.
     */
    public static byte[] serializeAssignment(Map<Uuid, Set<Integer>> partitions, ConsumerGroupTopics topics,
                                             short version) {
        Map<String, List<Integer>> byName = new TreeMap<>();
        partitions.forEach((topicId, ids) -> {
            String name = topics.topicName(topicId);
            if (name != null) {
                byName.put(name, ids.stream().sorted().toList());
            }
        });
        List<ConsumerProtocolAssignment.TopicPartition> list = new ArrayList<>();
        byName.forEach((name, ids) -> list.add(new ConsumerProtocolAssignment.TopicPartition().setTopic(name)
            .setPartitions(ids)));
        short capped = (short) Math.max(0, Math.min(version, HIGHEST_VERSION));
        ConsumerProtocolAssignment assignment = new ConsumerProtocolAssignment().setAssignedPartitions(list);
        SerializationCache cache = new SerializationCache();
        SizeAccumulator size = new SizeAccumulator();
        assignment.addSize(size, cache, capped);
        ByteBuf buf = Unpooled.buffer(2 + size.totalSize());
        try {
            buf.writeShort(capped);
            assignment.write(new ByteBufAccessor(buf), cache, capped);
            return ByteBufUtil.getBytes(buf);
        } finally {
            buf.release();
        }
    }
}
