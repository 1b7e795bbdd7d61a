/**
 * The write path behind the Produce and DeleteRecords APIs (Kafka's {@code ReplicaManager.appendRecords} and
 * {@code deleteRecords} with their {@code DelayedProduce} and {@code DelayedDeleteRecords}): the checks of a produce
 * request before any append, the verification of transactional batches with their coordinator (KIP-890), the leader
 * appends, and the waits in the purgatory until the high watermark (acks=all) or the low watermark (DeleteRecords)
 * covers them. The API handlers stay in {@code io.cairn.broker.handler} and decide authorization only.
 */
package io.cairn.broker.produce;
