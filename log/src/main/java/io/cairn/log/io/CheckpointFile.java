package io.cairn.log.io;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * Small text files replaced atomically: written to {@code <name>.tmp}, fsynced, renamed over the old one and the
 * directory fsynced ({@link FileLayer#atomicMove}), so a crash leaves either the old or the new content, and once
 * {@link #write} returns, the new one (Kafka's {@code CheckpointFile}). Kafka's checkpoint layout is
 * a version line, an entry-count line, then one line per entry; {@link #writeEntries} and {@link #readEntries}
 * implement it. Stateless and thread-safe; callers serialise writes to one file.
 */
public final class CheckpointFile {

    private CheckpointFile() {
    }

    /** Replaces {@code file} with {@code text}, durably once this returns. */
    public static void write(FileLayer layer, Path file, String text) {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try {
            try (FileChannel ch = layer.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
                ByteBuffer buf = ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
                ch.force(true);
            }
            layer.atomicMove(tmp, file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    /** Writes Kafka's checkpoint layout: version, count, entries. */
    public static void writeEntries(FileLayer layer, Path file, int version, List<String> entries) {
        StringBuilder text = new StringBuilder();
        text.append(version).append('\n').append(entries.size()).append('\n');
        for (String entry : entries) {
            text.append(entry).append('\n');
        }
        write(layer, file, text.toString());
    }

    /**
     * Reads Kafka's checkpoint layout; returns the entry lines, or an empty list when the file is missing.
     *
     * @throws IllegalStateException when the version or count does not match
     */
    public static List<String> readEntries(Path file, int expectedVersion) {
        if (!Files.exists(file)) {
            return List.of();
        }
        try {
            List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            if (lines.size() < 2 || Integer.parseInt(lines.get(0).trim()) != expectedVersion) {
                throw new IllegalStateException("malformed checkpoint " + file + ": bad version line");
            }
            int count = Integer.parseInt(lines.get(1).trim());
            if (lines.size() < 2 + count) {
                throw new IllegalStateException("malformed checkpoint " + file + ": expected " + count + " entries");
            }
            return new ArrayList<>(lines.subList(2, 2 + count));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        } catch (NumberFormatException e) {
            throw new IllegalStateException("malformed checkpoint " + file, e);
        }
    }
}
