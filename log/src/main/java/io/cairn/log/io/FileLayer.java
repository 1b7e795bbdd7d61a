package io.cairn.log.io;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.OpenOption;
import java.nio.file.Path;

/**
 * How the log opens the files it writes: every segment, index and checkpoint channel comes from here, so a test can
 * put a layer underneath that models what a power cut does to bytes that were never fsynced. Production uses
 * {@link #DEFAULT}, which is {@link FileChannel#open}. Implementations are thread-safe.
 */
public interface FileLayer {

    /** The real file system. */
    FileLayer DEFAULT = FileChannel::open;

    /** Opens a channel on {@code path}; {@code force} on the returned channel is what makes bytes durable. */
    FileChannel open(Path path, OpenOption... options) throws IOException;
}
