package io.cairn.broker.txn;

import io.cairn.metadata.image.TopicPartition;
import java.util.Collection;
import java.util.concurrent.CompletionStage;

/** Writes transaction markers to the leaders of partitions (Kafka's TransactionMarkerChannelManager). Thread-safe. */
public interface TransactionMarkerSender {

    /**
     * Writes a COMMIT ({@code commit}) or ABORT marker of {@code producerId}/{@code producerEpoch} into every
     * partition, retrying each until its leader acknowledged it, and completes once all are written (a partition
     * whose topic no longer exists counts as written). Completes exceptionally only when the sender closes or a
     * leader answers that {@code coordinatorEpoch} is fenced.
     */
    CompletionStage<Void> writeMarkers(String transactionalId, long producerId, short producerEpoch, boolean commit,
            int coordinatorEpoch, Collection<TopicPartition> partitions);
}
