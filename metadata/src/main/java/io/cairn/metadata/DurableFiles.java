package io.cairn.metadata;

import io.cairn.wire.io.AtomicRenames;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * How the metadata module makes the files it writes durable: fsync a file, rename it into place and fsync the
 * directory, as Kafka's {@code Utils.atomicMoveWithFallback} does, so that once a write returns a crash can leave
 * only the new content. The rename and the directory fsync are {@link AtomicRenames}, the one implementation the log
 * module's {@code FileLayer} shares. {@link #DEFAULT} is the real file system; a test puts a
 * recording implementation in its place. Implementations are thread-safe.
 */
public interface DurableFiles extends AtomicRenames {

    /** The real file system. */
    DurableFiles DEFAULT = new DurableFiles() {
    };

    /** Makes the bytes of {@code file} durable. */
    default void fsync(Path file) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            channel.force(true);
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
