package io.cairn.log;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.extension.AnnotatedElementContext;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.io.TempDirFactory;

/**
 * {@code @TempDir(factory = ShmTempDirFactory.class)}: a temp dir on tmpfs ({@code /dev/shm}) when there is one,
 * for tests whose durability model is simulated (power-loss layer) or irrelevant (SIGKILL keeps the page cache),
 * so real fsyncs do not dominate their run time. JUnit deletes it as usual.
 */
public final class ShmTempDirFactory implements TempDirFactory {

    @Override
    public Path createTempDirectory(AnnotatedElementContext elementContext, ExtensionContext extensionContext)
        throws IOException {
        Path shm = Path.of("/dev/shm");
        if (Files.isDirectory(shm) && Files.isWritable(shm)) {
            return Files.createTempDirectory(shm, "cairn-log-test-");
        }
        return Files.createTempDirectory("cairn-log-test-");
    }
}
