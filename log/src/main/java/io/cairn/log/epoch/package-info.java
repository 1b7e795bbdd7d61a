/**
 * The leader-epoch history of a partition and its {@code leader-epoch-checkpoint} file.
 */
package io.cairn.log.epoch;
