/**
 * The coordinator runtime shared by Cairn's coordinators, groups and transactions (Kafka's
 * {@code coordinator-common}): shards per partition of an internal topic this broker leads, loaded from the log, run
 * on a pool of coordinator threads one at a time per shard, with batched writes answered once committed, timers, and
 * transactional writes and markers.
 */
package io.cairn.broker.coordinator;
