/**
 * Operations that wait for an event or a deadline (Kafka's purgatory): {@link
 * io.cairn.broker.purgatory.DelayedOperation} and {@link io.cairn.broker.purgatory.DelayedOperationPurgatory}, which
 * completes them when a watched key changes and expires them on a timer, never by polling.
 */
package io.cairn.broker.purgatory;
