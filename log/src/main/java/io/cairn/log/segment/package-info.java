/**
 * Segments: the {@code .log} file of concatenated batches and the segment that ties it to its indexes.
 */
package io.cairn.log.segment;
