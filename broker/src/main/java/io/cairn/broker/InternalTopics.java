package io.cairn.broker;

import io.cairn.broker.group.GroupCoordinator;
import io.cairn.broker.share.ShareCoordinator;
import io.cairn.broker.txn.TransactionCoordinator;
import java.util.Set;

/**
 * Kafka's internal topics ({@code Topic.INTERNAL_TOPICS}): the group, transaction and share coordinators' state topics,
 * which clients see flagged internal and may not produce to or delete records from. Stateless.
 */
public final class InternalTopics {

    private static final Set<String> TOPICS = Set.of(GroupCoordinator.TOPIC, TransactionCoordinator.TOPIC,
            ShareCoordinator.TOPIC);

    private InternalTopics() {
    }

    /** Whether {@code topic} (null: no) is one of Kafka's internal topics. */
    public static boolean isInternal(String topic) {
        return topic != null && TOPICS.contains(topic);
    }
}
