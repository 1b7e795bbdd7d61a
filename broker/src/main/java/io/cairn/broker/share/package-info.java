/**
 * The share coordinator (KIP-932, Kafka's {@code share-coordinator} module): the persisted state of share-partitions
 * in {@code __share_group_state}, on the coordinator runtime, and its five state RPCs. The broker-side share groups
 * (share-partition leaders, ShareGroupHeartbeat, ShareFetch, ShareAcknowledge) build on it; see the broker README's
 * "Share groups" section for how.
 */
package io.cairn.broker.share;
