/**
 * File access underneath the log: the replaceable {@link io.cairn.log.io.FileLayer}, atomic checkpoint files,
 * reference-counted channels and the explicit bound on open handles and mappings.
 */
package io.cairn.log.io;
