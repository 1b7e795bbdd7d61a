package io.cairn.broker.group.consumer;

import io.cairn.broker.coordinator.CoordinatorRecord;
import java.util.List;
import java.util.function.Predicate;

/**
 * What the consumer groups of a shard see of its classic groups: whether a classic group has an id, and the
 * conversions between the two types (Kafka's online migration, KIP-848): an empty classic group is replaced by a
 * consumer group; a classic group with members is upgraded when a member joins with ConsumerGroupHeartbeat; a consumer
 * group is downgraded when its last member speaking the consumer protocol leaves and classic members remain. The shard
 * implements it over its classic groups; the consumer groups decide when (and check
 * {@code group.consumer.migration.policy}).
 *
 * <p>Thread-safety: called on the shard's thread only.
 */
public interface ClassicGroupLink {

    /** A link to the classic groups {@code exists} tells, which it neither replaces nor converts. */
    static ClassicGroupLink refusing(Predicate<String> exists) {
        return new ClassicGroupLink() {
            @Override
            public boolean exists(String groupId) {
                return exists.test(groupId);
            }

            @Override
            public List<CoordinatorRecord> replaceEmpty(String groupId) {
                return null;
            }

            @Override
            public Conversion<ConsumerGroup> upgrade(String groupId) {
                return null;
            }

            @Override
            public Conversion<Void> downgrade(ConsumerGroup group, String leavingMemberId) {
                throw new IllegalStateException("Group " + group.groupId() + " cannot be downgraded here");
            }
        };
    }

    /**
     * A conversion done in memory: its result, the records that make it durable (written with the change that caused
     * it), and how to undo it if that write fails.
     */
    record Conversion<T>(T result, List<CoordinatorRecord> records, Runnable undo) {
        public Conversion {
            records = List.copyOf(records);
        }
    }

    /** Whether a classic group (even an empty one) has this id. */
    boolean exists(String groupId);

    /**
     * Removes the classic group of the id when it is empty and returns the records that delete it; returns null when
     * it is not empty.
     */
    List<CoordinatorRecord> replaceEmpty(String groupId);

    /**
     * Converts the classic group of the id, which has members, into a consumer group (Kafka's
     * {@code convertToConsumerGroup}): its members become members speaking the classic protocol at the group's
     * generation with their last assignment, its pending JoinGroup and SyncGroup calls are answered
     * REBALANCE_IN_PROGRESS, and it is forgotten. Returns null, changing nothing, when the group cannot be upgraded
     * (the policy does not allow it, its members do not use the consumer protocol, it is larger than
     * {@code group.consumer.max.size}, a subscription cannot be read).
     */
    Conversion<ConsumerGroup> upgrade(String groupId);

    /**
     * Converts {@code group}, whose members but {@code leavingMemberId} all speak the classic protocol, into a classic
     * group of those members (Kafka's {@code convertToClassicGroup}), which starts a rebalance; with a null
     * {@code leavingMemberId} (a classic member replaced the last consumer-protocol static member), of all its members,
     * Stable, without a rebalance. The caller checked the
     * policy and forgets the consumer group; the records include the classic group's metadata record, not the
     * consumer group's tombstones.
     */
    Conversion<Void> downgrade(ConsumerGroup group, String leavingMemberId);
}
