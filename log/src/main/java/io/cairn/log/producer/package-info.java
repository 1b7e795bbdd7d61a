/**
 * Producer state: per producer id the epoch, recent batches for duplicate detection, open transactions, and
 * the snapshots that make it survive restarts.
 */
package io.cairn.log.producer;
