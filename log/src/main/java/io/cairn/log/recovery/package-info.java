/**
 * Loading a partition directory and recovering it after an unclean shutdown.
 */
package io.cairn.log.recovery;
