package io.cairn.broker.txn;

import io.cairn.metadata.image.TopicPartition;
import java.util.Set;

/**
 * The state a transactional id moves to once the record describing it is written (Kafka's
 * {@code TxnTransitMetadata}): what {@link TransactionMetadata} prepares, {@link TransactionLog} writes and
 * {@link TransactionMetadata#completeTransitionTo} applies. Immutable.
 *
 * @param producerId             the producer id
 * @param prevProducerId         the producer id before the last rotation, or -1
 * @param producerEpoch          the producer epoch
 * @param lastProducerEpoch      the epoch before the last bump, or -1 (KIP-360: lets a retried bump be recognised)
 * @param txnTimeoutMs           the transaction timeout
 * @param state                  the state
 * @param topicPartitions        the partitions of the transaction
 * @param txnStartTimestamp      when the transaction started, or -1
 * @param txnLastUpdateTimestamp when this transition was made
 */
public record TxnTransitMetadata(long producerId, long prevProducerId, short producerEpoch, short lastProducerEpoch,
                                 int txnTimeoutMs, TransactionState state, Set<TopicPartition> topicPartitions,
                                 long txnStartTimestamp, long txnLastUpdateTimestamp) {

    public TxnTransitMetadata {
        topicPartitions = Set.copyOf(topicPartitions);
    }
}
