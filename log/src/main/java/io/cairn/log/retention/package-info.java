/**
 * Deleting old segments by time, size and log start offset.
 */
package io.cairn.log.retention;
