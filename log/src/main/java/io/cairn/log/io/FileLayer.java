package io.cairn.log.io;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * How the log opens, renames and syncs the files it writes: every segment, index and checkpoint channel comes from
 * here, and every rename into place goes through {@link #atomicMove}, so a test can put a layer underneath that
 * models what a power cut does to bytes (and directory entries) that were never fsynced. Production uses
 * {@link #DEFAULT}, which is {@link FileChannel#open}. Implementations are thread-safe.
 */
public interface FileLayer {

    /** The real file system. */
    FileLayer DEFAULT = FileChannel::open;

    /** Opens a channel on {@code path}; {@code force} on the returned channel is what makes bytes durable. */
    FileChannel open(Path path, OpenOption... options) throws IOException;

    /**
     * Makes the entries of {@code dir} durable: the files created, renamed or deleted in it survive a power cut
     * (Kafka's {@code Utils.flushDir}). A failure is an {@link IOException}: the caller cannot claim durability.
     */
    default void fsyncDirectory(Path dir) throws IOException {
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        }
    }

    /**
     * Renames {@code source} to {@code target}, replacing it, then fsyncs {@code target}'s directory before
     * returning, so that the rename itself survives a crash (Kafka's {@code Utils.atomicMoveWithFallback}). The
     * rename is atomic where the file system can do it, a plain replacing move otherwise. The caller has already
     * fsynced {@code source}'s bytes. The directory is fsynced even when the move fails, since the failure may have
     * come after the directory changed.
     */
    default void atomicMove(Path source, Path target) throws IOException {
        try {
            try {
                Files.move(source, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(source, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            fsyncDirectory(target.toAbsolutePath().normalize().getParent());
        }
    }
}
