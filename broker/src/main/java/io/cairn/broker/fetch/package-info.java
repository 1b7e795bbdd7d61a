/**
 * The Fetch API's service side (Kafka's {@code FetchManager}, {@code FetchSession} and the fetch half of
 * {@code ReplicaManager}): incremental fetch sessions (KIP-227), reads of many partitions under one byte budget, and
 * the delayed fetch that long-polls in the purgatory until appends or {@code max.wait.ms} complete it.
 */
package io.cairn.broker.fetch;
