/**
 * The cluster metadata image: immutable snapshots of brokers, topics, partitions, configs, producer-id blocks,
 * ACLs and SCRAM credentials ({@link io.cairn.metadata.image.MetadataImage}), the deterministic application of
 * metadata records to an image ({@link io.cairn.metadata.image.MetadataDelta}), the record batch encoding
 * ({@link io.cairn.metadata.image.MetadataRecords}) and the subscriber types.
 */
package io.cairn.metadata.image;
