package io.cairn.metadata;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * How the metadata module makes the files it writes durable: fsync a file, rename it into place and fsync the
 * directory, as Kafka's {@code Utils.atomicMoveWithFallback} does, so that once a write returns a crash can leave
 * only the new content. The log module's {@code FileLayer} has the same contract for the partition logs; this module
 * may not see it (DESIGN.md's module graph), hence its own. {@link #DEFAULT} is the real file system; a test puts a
 * recording implementation in its place. Implementations are thread-safe.
 */
public interface DurableFiles {

    /** The real file system. */
    DurableFiles DEFAULT = new DurableFiles() {
    };

    /** Makes the bytes of {@code file} durable. */
    default void fsync(Path file) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            channel.force(true);
        }
    }

    /** Makes the entries of {@code dir} (files created, renamed, deleted) durable (Kafka's {@code Utils.flushDir}). */
    default void fsyncDirectory(Path dir) throws IOException {
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        }
    }

    /**
     * Renames the already fsynced {@code source} to {@code target}, replacing it (atomically where the file system
     * can), then fsyncs {@code target}'s directory before returning; the directory is fsynced even when the move
     * fails, since the failure may have come after the directory changed.
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

    /** Replaces {@code file} with {@code bytes}: a temp file, fsynced, then {@link #atomicMove}d into place. */
    default void write(Path file, byte[] bytes) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try (FileChannel channel = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer buf = ByteBuffer.wrap(bytes);
            while (buf.hasRemaining()) {
                channel.write(buf);
            }
        }
        fsync(tmp);
        atomicMove(tmp, file);
    }
}
