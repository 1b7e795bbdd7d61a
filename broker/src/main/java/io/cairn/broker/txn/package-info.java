/**
 * The transaction coordinator (KIP-98, KIP-360, KIP-664, KIP-890 part 1, KIP-994): {@code __transaction_state}
 * records ({@code TransactionLog}, generated {@code txn.record} classes), the state of a transactional id
 * ({@code TransactionMetadata}, {@code TransactionState}), the rules of one partition's ids
 * ({@code TransactionManager}), the shard that holds them ({@code TransactionShard}) and the transaction kind of the
 * coordinator runtime, which loads a shard per led partition and routes requests to it
 * ({@code TransactionCoordinator}). Markers go out through {@code TransactionMarkerSender}.
 */
package io.cairn.broker.txn;
