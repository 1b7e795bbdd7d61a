package io.cairn.wire.io;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * The one way Cairn renames a file into place so the rename survives a crash, as Kafka's
 * {@code Utils.atomicMoveWithFallback} with {@code Utils.flushDir} does: the log's {@code FileLayer} and the metadata's
 * {@code DurableFiles} both extend it (a test layer underneath either overrides {@link #fsyncDirectory} to model a
 * power cut). Implementations are thread-safe.
 */
public interface AtomicRenames {

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
     * returning, so that the rename itself survives a crash. The rename is atomic where the file system can do it, a
     * plain replacing move otherwise. The caller has already fsynced {@code source}'s bytes. The directory is fsynced
     * even when the move fails, since the failure may have come after the directory changed.
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
