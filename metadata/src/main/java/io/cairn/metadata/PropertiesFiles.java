package io.cairn.metadata;

import java.io.IOException;
import java.io.Reader;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Properties;

/**
 * The small properties files of a metadata dir: read when present, written atomically and durably. Stateless,
 * thread-safe.
 */
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

    /**
     * Writes {@code props} to {@code dir/name} durably (creating {@code dir}): a temp file, fsynced, renamed into
     * place, the directory fsynced ({@link DurableFiles#write}).
     */
    static void write(Path dir, String name, Properties props, String comment) throws IOException {
        Files.createDirectories(dir);
        StringWriter text = new StringWriter();
        props.store(text, comment);
        DurableFiles.DEFAULT.write(dir.resolve(name), text.toString().getBytes(StandardCharsets.UTF_8));
    }
}
