package io.cairn.broker.txn;

import io.cairn.metadata.image.TopicPartition;
import java.util.Set;

/**
 * The state a transactional id moves to once the record describing it is written (Kafka's
 * {@code TxnTransitMetadata}): what {@link TransactionMetadata} prepares, {@link TransactionLog} writes and
 * {@link TransactionMetadata#completeTransitionTo} applies. Immutable.
 *
 * @param producerId               the producer id
 * @param prevProducerId           the producer id before the last rotation, or -1
 * @param nextProducerId           transaction.version 2: the producer id the transaction's completion rotates to
 *                                 (its epoch was exhausted), or -1
 * @param producerEpoch            the producer epoch
 * @param lastProducerEpoch        the epoch before the last bump, or -1 (KIP-360: lets a retried bump be recognised)
 * @param txnTimeoutMs             the transaction timeout
 * @param state                    the state
 * @param topicPartitions          the partitions of the transaction
 * @param txnStartTimestamp        when the transaction started, or -1
 * @param txnLastUpdateTimestamp   when this transition was made
 * @param clientTransactionVersion the transaction.version the producer's requests speak (0, or 2 for EndTxn v5 and
 *                                 the brokers' AddPartitionsToTxn v4+)
 */
public record TxnTransitMetadata(long producerId, long prevProducerId, long nextProducerId, short producerEpoch,
                                 short lastProducerEpoch, int txnTimeoutMs, TransactionState state,
                                 Set<TopicPartition> topicPartitions, long txnStartTimestamp,
                                 long txnLastUpdateTimestamp, short clientTransactionVersion) {

    public TxnTransitMetadata {
        topicPartitions = Set.copyOf(topicPartitions);
    }

    /** A transition of transaction.version 0 without a next producer id. */
    public TxnTransitMetadata(long producerId, long prevProducerId, short producerEpoch, short lastProducerEpoch,
                              int txnTimeoutMs, TransactionState state, Set<TopicPartition> topicPartitions,
                              long txnStartTimestamp, long txnLastUpdateTimestamp) {
        this(producerId, prevProducerId, TransactionMetadata.NO_PRODUCER_ID, producerEpoch, lastProducerEpoch,
                txnTimeoutMs, state, topicPartitions, txnStartTimestamp, txnLastUpdateTimestamp, (short) 0);
    }
}
