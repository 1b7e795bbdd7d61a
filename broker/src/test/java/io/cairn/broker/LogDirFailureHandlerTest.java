package io.cairn.broker;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The first failure of a log directory, or of the metadata log, halts the process with exit code 1, once, off the
 * failing thread.
 */
class LogDirFailureHandlerTest {

    @Test
    void theFirstFailureHaltsWithExitCodeOneOnTheHandlerThread() throws Exception {
        // Given
        List<String> halts = new CopyOnWriteArrayList<>();
        CountDownLatch halted = new CountDownLatch(1);
        Path dir = Path.of("/data/kafka-logs");
        LogDirFailureHandler handler = new LogDirFailureHandler(List.of(dir), status -> {
            halts.add(status + " on " + Thread.currentThread().getName());
            halted.countDown();
        });

        // When: two writes of the directory fail
        handler.onLogDirFailure(dir, "cannot append", new IOException("No space left on device"));
        handler.onLogDirFailure(dir, "cannot flush", new IOException("No space left on device"));

        // Then
        assertThat(halted.await(10, TimeUnit.SECONDS)).isTrue();
        Thread.sleep(100);
        assertThat(halts).containsExactly("1 on " + LogDirFailureHandler.THREAD_NAME);
    }

    @Test
    void aFailedMetadataLogWriteHaltsWithExitCodeOne() throws Exception {
        // Given
        List<Integer> halts = new CopyOnWriteArrayList<>();
        CountDownLatch halted = new CountDownLatch(1);
        LogDirFailureHandler handler = new LogDirFailureHandler(List.of(Path.of("/data/kafka-logs")), status -> {
            halts.add(status);
            halted.countDown();
        });

        // When
        handler.onMetadataLogFailure(Path.of("/data/metadata"), new IOException("No space left on device"));

        // Then
        assertThat(halted.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(halts).containsExactly(1);
    }
}
