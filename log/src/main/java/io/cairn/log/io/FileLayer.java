package io.cairn.log.io;

import io.cairn.wire.io.AtomicRenames;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.OpenOption;
import java.nio.file.Path;

/**
 * How the log opens, renames and syncs the files it writes: every segment, index and checkpoint channel comes from
 * here, and every rename into place goes through {@link #atomicMove} (with its directory fsync, shared with the
 * metadata module through {@link AtomicRenames}), so a test can put a layer underneath that
 * models what a power cut does to bytes (and directory entries) that were never fsynced. Production uses
 * {@link #DEFAULT}, which is {@link FileChannel#open}. Implementations are thread-safe.
 */
public interface FileLayer extends AtomicRenames {

    /** The real file system. */
    FileLayer DEFAULT = FileChannel::open;

    /** Opens a channel on {@code path}; {@code force} on the returned channel is what makes bytes durable. */
    FileChannel open(Path path, OpenOption... options) throws IOException;
}
