/**
 * Transaction verification on the produce path (KIP-890 part 1, Kafka's {@code AddPartitionsToTxnManager}): before a
 * leader appends a transactional producer's first batch of a transaction, it asks the transaction coordinator whether
 * the partition was added to the producer's transaction.
 */
package io.cairn.broker.txn.verification;
