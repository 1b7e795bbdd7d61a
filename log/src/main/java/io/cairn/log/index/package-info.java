/**
 * The per-segment indexes in Kafka's formats: offset index, time index (memory-mapped) and transaction index.
 */
package io.cairn.log.index;
