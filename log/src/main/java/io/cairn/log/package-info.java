/**
 * The native segment log: {@link io.cairn.log.PartitionLog} (one partition), {@link io.cairn.log.LogManager} (a log
 * directory), their configuration and value types. Depends on {@code wire} only.
 */
package io.cairn.log;
