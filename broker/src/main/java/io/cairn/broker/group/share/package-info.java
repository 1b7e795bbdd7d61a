/**
 * KIP-932 share groups on the group coordinator (Kafka's {@code GroupMetadataManager} share-group half): their
 * records in {@code __consumer_offsets}, ShareGroupHeartbeat with the {@code simple} assignor, sessions,
 * ShareGroupDescribe, and the initialization of each subscribed share-partition's state at the share coordinator.
 */
package io.cairn.broker.group.share;
