package io.cairn.broker.txn;

/**
 * The broker settings of the transaction coordinator (Kafka's {@code transaction.*} and
 * {@code transactional.id.expiration.ms} keys). Immutable.
 *
 * @param transactionalIdExpirationMs      transactional.id.expiration.ms: how long a transactional id without a
 *                                         transaction lives after its last update
 * @param maxTimeoutMs                     transaction.max.timeout.ms: the largest transaction timeout InitProducerId
 *                                         accepts (INVALID_TRANSACTION_TIMEOUT above)
 * @param logNumPartitions                 transaction.state.log.num.partitions: the partition count of
 *                                         {@code __transaction_state} until it exists
 * @param logReplicationFactor             transaction.state.log.replication.factor
 * @param logSegmentBytes                  transaction.state.log.segment.bytes
 * @param loadBufferSize                   transaction.state.log.load.buffer.size: bytes read at a time on load
 * @param logMinIsr                        transaction.state.log.min.isr
 * @param abortTimedOutIntervalMs          transaction.abort.timed.out.transaction.cleanup.interval.ms
 * @param removeExpiredIntervalMs          transaction.remove.expired.transaction.cleanup.interval.ms
 */
public record TransactionConfig(long transactionalIdExpirationMs, int maxTimeoutMs, int logNumPartitions,
                                short logReplicationFactor, int logSegmentBytes, int loadBufferSize, int logMinIsr,
                                long abortTimedOutIntervalMs, long removeExpiredIntervalMs) {

    /** Kafka 4.1's defaults. */
    public static TransactionConfig defaults() {
        return new TransactionConfig(7L * 24 * 60 * 60 * 1000, 900_000, 50, (short) 3, 100 * 1024 * 1024,
                5 * 1024 * 1024, 2, 10_000L, 3_600_000L);
    }

    /** Kafka's {@code validateTransactionTimeoutMs}: in (0, transaction.max.timeout.ms]. */
    public boolean validTimeout(int timeoutMs) {
        return timeoutMs > 0 && timeoutMs <= maxTimeoutMs;
    }
}
