package io.cairn.compat.group;

import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * A member's rebalance listener: keeps the partitions its callbacks handed it and what it read from each (the
 * offset after its last record, {@link #read}), and commits that for the partitions it gives up, before another
 * member may read them. Not {@code position()}: {@code close()} revokes the whole assignment, including a
 * partition just assigned in the background whose position the consumer has not looked up yet, and a closing
 * consumer (4.1) no longer sends OffsetFetch, so {@code position()} of such a partition waits out {@code
 * default.api.timeout.ms} (60 s; seen once as a 61 s {@code close()}, on Kafka as on Cairn). A partition the
 * member read nothing from has nothing to commit. Used by the polling thread only.
 */
final class CommittingOnRevocation implements ConsumerRebalanceListener {

    private final KafkaConsumer<String, String> consumer;
    private final Set<TopicPartition> owned = new HashSet<>();
    private final Map<TopicPartition, OffsetAndMetadata> readUpTo = new HashMap<>();

    CommittingOnRevocation(KafkaConsumer<String, String> consumer) {
        this.consumer = consumer;
    }

    /** Subscribes {@code consumer} to {@code topic} with a new listener, registered in {@code listeners}. */
    static void subscribe(KafkaConsumer<String, String> consumer, String topic,
            Map<KafkaConsumer<String, String>, CommittingOnRevocation> listeners) {
        CommittingOnRevocation listener = new CommittingOnRevocation(consumer);
        listeners.put(consumer, listener);
        consumer.subscribe(List.of(topic), listener);
    }

    void read(ConsumerRecords<String, String> records) {
        records.forEach(record -> readUpTo.put(new TopicPartition(record.topic(), record.partition()),
                new OffsetAndMetadata(record.offset() + 1)));
    }

    Set<TopicPartition> owned() {
        return owned;
    }

    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
        owned.removeAll(partitions);
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        for (TopicPartition tp : partitions) {
            OffsetAndMetadata upTo = readUpTo.remove(tp);
            if (upTo != null) {
                offsets.put(tp, upTo);
            }
        }
        if (!offsets.isEmpty()) {
            commit(offsets);
        }
    }

    /**
     * Commits, retrying a commit refused for a stale member epoch (KIP-848, Kafka's rule on Kafka as on Cairn): the
     * coordinator bumps every member's epoch when the group's moves, and a member that commits before the heartbeat
     * response carrying its new epoch has been handled gets STALE_MEMBER_EPOCH, which the 4.1 client surfaces as a
     * {@link CommitFailedException} saying to retry once the heartbeat brought the epoch (seen once on a close()
     * right after the group had become stable). Other failures, and the twentieth stale one, are thrown.
     */
    private void commit(Map<TopicPartition, OffsetAndMetadata> offsets) {
        for (int attempt = 1; ; attempt++) {
            try {
                consumer.commitSync(offsets, GroupClients.TIMEOUT);
                return;
            } catch (CommitFailedException e) {
                if (attempt == 20 || e.getMessage() == null || !e.getMessage().contains("stale member epoch")) {
                    throw e;
                }
                try {
                    Thread.sleep(100);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
        owned.addAll(partitions);
    }

    /**
     * Lost (the member was fenced): its commit would fail, and another member may already read them; what it read
     * is forgotten, as Kafka's documentation asks of a listener.
     */
    @Override
    public void onPartitionsLost(Collection<TopicPartition> partitions) {
        owned.removeAll(partitions);
        partitions.forEach(readUpTo::remove);
    }
}
