/**
 * KIP-848 consumer groups (Kafka's {@code modern.consumer}), separate from the classic groups of
 * {@code broker.group}: members with member epochs, the group epoch and the target assignment epoch, the target
 * assignment computed by a server-side assignor ({@code broker.group.assignor}), and each member's reconciliation
 * towards it (revoke before assign). The model is internal: ConsumerGroupHeartbeat and ConsumerGroupDescribe are not
 * served yet, so nothing here is reachable from a client.
 */
package io.cairn.broker.group.consumer;
