package io.cairn.broker.group.assignor;

/**
 * A server-side assignor of KIP-848 consumer groups (Kafka's {@code ConsumerGroupPartitionAssignor}): computes a
 * group's target assignment. Every partition of a topic that some member subscribes to is assigned to exactly one
 * member subscribed to that topic, and no member gets a partition of a topic it does not subscribe to.
 *
 * <p>Implementations are stateless and thread-safe.
 */
public interface PartitionAssignor {

    /** The name clients give in {@code group.remote.assignor} and brokers list in {@code group.consumer.assignors}. */
    String name();

    /**
     * The target assignment of every member of {@code spec}.
     *
     * @throws PartitionAssignorException when a member subscribes to a topic {@code topics} does not know
     */
    GroupAssignment assign(GroupSpec spec, TopicPartitionCounts topics);

    /** The assignment cannot be computed. Immutable. */
    final class PartitionAssignorException extends RuntimeException {

        private static final long serialVersionUID = 1L;

        public PartitionAssignorException(String message) {
            super(message);
        }
    }
}
