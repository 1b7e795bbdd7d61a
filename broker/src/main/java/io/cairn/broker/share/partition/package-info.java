/**
 * The share-partition leader of share groups (KIP-932; Kafka's {@code SharePartitionManager} and
 * {@code SharePartition}): the delivery state of the records of each (share group, topic partition) this broker leads,
 * share sessions, and ShareFetch/ShareAcknowledge v1. The state is persisted through the share coordinator
 * ({@link io.cairn.broker.share.ShareCoordinator}).
 */
package io.cairn.broker.share.partition;
