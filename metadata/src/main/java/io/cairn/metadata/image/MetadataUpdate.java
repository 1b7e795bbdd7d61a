package io.cairn.metadata.image;

/**
 * One committed batch as a subscriber sees it. Immutable, thread-safe.
 *
 * @param previous the image before the batch
 * @param image    the image after the batch
 * @param changes  what the batch changed
 */
public record MetadataUpdate(MetadataImage previous, MetadataImage image, MetadataChanges changes) {
}
