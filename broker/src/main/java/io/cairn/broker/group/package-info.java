/**
 * The group coordinator: consumer groups (the classic protocol) and their committed and transactional offsets, kept
 * as records in the compacted internal topic {@code __consumer_offsets}; this broker coordinates the groups whose
 * partition of that topic it leads. It is the group kind of the coordinator runtime ({@code broker.coordinator}).
 */
package io.cairn.broker.group;
