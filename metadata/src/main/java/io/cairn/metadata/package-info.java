/**
 * Cluster metadata for the rest of the broker: {@link io.cairn.metadata.MetadataNode} (the public API: current
 * image, committed updates, controller commands), {@link io.cairn.metadata.MetadataConfig} (Kafka's KRaft keys),
 * {@code meta.properties} and {@link io.cairn.metadata.StorageTool} (Cairn's kafka-storage format).
 */
package io.cairn.metadata;
