package io.cairn.log;

import io.cairn.log.io.FileLayer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A test-only file layer over the real file system that records, in order, what the code under test asks of it:
 * {@code open <file> [options]}, {@code write <file>}, {@code truncate <file> <size>}, {@code force <file>},
 * {@code atomicMove <source> <target>} (when the call starts) and {@code fsyncDirectory <dir> [entries]} with the
 * names the directory holds at that moment, so a test can tell a rename happened before the directory fsync. Files
 * are named by their last path element. {@link #failWritesTo} makes every later write of one file fail, as a power
 * cut at that moment would leave it. Thread-safe.
 */
public final class RecordingFileLayer implements FileLayer {

    private final List<String> events = new ArrayList<>();
    private volatile String failWritesTo;

    /** Every event so far, oldest first. */
    public synchronized List<String> events() {
        return List.copyOf(events);
    }

    public synchronized void clear() {
        events.clear();
    }

    /** From now on every write to a file named {@code fileName} throws (the bytes never reach the file). */
    public void failWritesTo(String fileName) {
        failWritesTo = fileName;
    }

    private synchronized void record(String event) {
        events.add(event);
    }

    @Override
    public FileChannel open(Path path, OpenOption... options) throws IOException {
        String name = path.getFileName().toString();
        record("open " + name + " " + Arrays.toString(options));
        return new Recording(FileChannel.open(path, options), name);
    }

    @Override
    public void atomicMove(Path source, Path target) throws IOException {
        record("atomicMove " + source.getFileName() + " " + target.getFileName());
        FileLayer.super.atomicMove(source, target);
    }

    @Override
    public void fsyncDirectory(Path dir) throws IOException {
        String entries;
        try (Stream<Path> files = Files.list(dir)) {
            entries = files.map(p -> p.getFileName().toString()).sorted().collect(Collectors.joining(", ", "[", "]"));
        }
        FileLayer.super.fsyncDirectory(dir);
        record("fsyncDirectory " + dir.getFileName() + " " + entries);
    }

    /** Records writes, truncations and fsyncs; fails writes when asked to. */
    private final class Recording extends DelegatingFileChannel {
        private final String name;

        Recording(FileChannel real, String name) {
            super(real);
            this.name = name;
        }

        private void writing() throws IOException {
            record("write " + name);
            if (name.equals(failWritesTo)) {
                throw new IOException("power cut while writing " + name);
            }
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            writing();
            return super.write(src);
        }

        @Override
        public int write(ByteBuffer src, long position) throws IOException {
            writing();
            return super.write(src, position);
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
            writing();
            return super.write(srcs, offset, length);
        }

        @Override
        public FileChannel truncate(long size) throws IOException {
            record("truncate " + name + " " + size);
            return super.truncate(size);
        }

        @Override
        public void force(boolean metaData) throws IOException {
            super.force(metaData);
            record("force " + name);
        }
    }
}
