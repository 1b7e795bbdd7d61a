package io.cairn.metadata;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Optional;
import java.util.Properties;

/** The small properties files of a metadata dir: read when present, written atomically. Stateless, thread-safe. */
final class PropertiesFiles {

    private PropertiesFiles() {
    }

    /** The properties of {@code dir/name}, empty when there is no such file. */
    static Optional<Properties> read(Path dir, String name) throws IOException {
        Path file = dir.resolve(name);
        if (!Files.exists(file)) {
            return Optional.empty();
        }
        Properties props = new Properties();
        try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            props.load(reader);
        }
        return Optional.of(props);
    }

    /** Writes {@code props} to {@code dir/name} through a temp file and an atomic move (creating {@code dir}). */
    static void write(Path dir, String name, Properties props, String comment) throws IOException {
        Files.createDirectories(dir);
        Path tmp = dir.resolve(name + ".tmp");
        try (Writer writer = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
            props.store(writer, comment);
        }
        Files.move(tmp, dir.resolve(name), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
