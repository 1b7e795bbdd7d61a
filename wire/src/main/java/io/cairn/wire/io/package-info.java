/** File-system primitives shared by the log and the metadata modules: durable renames. */
package io.cairn.wire.io;
