/**
 * The transaction marker channel (Kafka's {@code TransactionMarkerChannelManager}): how the transaction coordinator's
 * COMMIT and ABORT markers reach the leaders of a transaction's partitions, as WriteTxnMarkers requests over the
 * inter-broker listener, grouped per leader and retried until written.
 */
package io.cairn.broker.txn.markers;
