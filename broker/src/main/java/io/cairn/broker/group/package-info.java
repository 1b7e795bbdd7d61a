/**
 * The group coordinator: consumer groups (the classic protocol) and their committed offsets, kept as records in the
 * compacted internal topic {@code __consumer_offsets}; this broker coordinates the groups whose partition of that
 * topic it leads.
 */
package io.cairn.broker.group;
