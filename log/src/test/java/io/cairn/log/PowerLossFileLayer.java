package io.cairn.log;

import io.cairn.log.io.FileLayer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A test-only file layer that models a power cut: it remembers, per file, the bytes as of the last {@code force}
 * (the durable image); {@link #cut} rewrites every file it has seen to that image, forgetting (or garbling) all
 * bytes written since. Files never fsynced become empty. Renamed-away files are skipped (the log renames only
 * fsynced files: checkpoints, segments being deleted). Thread-safe.
 */
public final class PowerLossFileLayer implements FileLayer {

    /** What happens to bytes that were never fsynced. */
    public enum Mode { FORGET, GARBLE }

    private final Map<Path, byte[]> durable = new ConcurrentHashMap<>();

    @Override
    public FileChannel open(Path path, OpenOption... options) throws IOException {
        Path key = path.toAbsolutePath();
        boolean existed = Files.exists(key);
        FileChannel real = FileChannel.open(path, options);
        if (!durable.containsKey(key)) {
            durable.put(key, existed ? Files.readAllBytes(key) : new byte[0]);
        }
        return new Tracking(real, key);
    }

    /** Simulates the power cut on every file this layer opened. */
    public void cut(Mode mode, Random random) {
        for (Map.Entry<Path, byte[]> e : durable.entrySet()) {
            Path file = e.getKey();
            if (!Files.exists(file)) {
                continue;
            }
            try {
                byte[] current = Files.readAllBytes(file);
                byte[] image = e.getValue();
                byte[] after = image;
                if (mode == Mode.GARBLE && current.length > image.length) {
                    int keep = image.length + random.nextInt(current.length - image.length + 1);
                    after = java.util.Arrays.copyOf(image, keep);
                    for (int i = image.length; i < keep; i++) {
                        after[i] = random.nextInt(4) == 0 ? current[i] : (byte) random.nextInt(256);
                    }
                }
                Files.write(file, after);
            } catch (IOException ex) {
                throw new UncheckedIOException(ex);
            }
        }
        durable.clear();
    }

    private void synced(Path file) {
        try {
            if (Files.exists(file)) {
                durable.put(file, Files.readAllBytes(file));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Delegates everything; {@code force} records the durable image. */
    private final class Tracking extends DelegatingFileChannel {
        private final Path path;

        Tracking(FileChannel real, Path path) {
            super(real);
            this.path = path;
        }

        @Override
        public void force(boolean metaData) throws IOException {
            super.force(metaData);
            synced(path);
        }
    }
}
