/**
 * The metadata quorum on Apache Ratis (the only package that imports Ratis): the state machine applying record
 * batches to the image with snapshots, and {@link io.cairn.metadata.ratis.RatisMetadataNode}, the
 * {@link io.cairn.metadata.MetadataNode} of controllers (voters) and broker-only nodes (listeners).
 */
package io.cairn.metadata.ratis;
