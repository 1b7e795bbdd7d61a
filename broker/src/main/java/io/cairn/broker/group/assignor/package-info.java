/**
 * The server-side partition assignors of KIP-848 consumer groups ({@code group.consumer.assignors}, chosen by a
 * client with {@code group.remote.assignor}): {@code uniform} (balanced and sticky) and {@code range} (contiguous
 * ranges per topic, co-partitioned when every member subscribes to the same topics). An assignor is a pure function
 * from the members' subscriptions, their current target assignment and the topics' partition counts to a new target
 * assignment. Rack-aware placement is not implemented: rack ids are carried but not used.
 */
package io.cairn.broker.group.assignor;
