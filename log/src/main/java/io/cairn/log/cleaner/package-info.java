/**
 * Log compaction: the cleaner that keeps the latest record per key, its offset map and I/O throttle.
 */
package io.cairn.log.cleaner;
